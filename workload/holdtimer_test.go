package workload

import (
	"context"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"time"
)

// Holders of the process share one timing goroutine and one solo slot: many holding at
// once, none comes back before its time, and at most two goroutines ever spin for them all.
func TestHoldTimerHoldsNoneEarlyWithOneSpinner(t *testing.T) {
	h := processHolds()
	var wg sync.WaitGroup
	early := make(chan string, 64)
	for g := range 64 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 1))
			wake := make(chan struct{}, 1)
			for range 20 {
				d := time.Duration(rng.IntN(3000)+1) * time.Microsecond
				start := time.Now()
				late, ok := h.hold(context.Background(), d, wake)
				took := time.Since(start)
				if !ok || late < 0 || took < d {
					select {
					case early <- "hold of " + d.String() + " took " + took.String() + ", late " + late.String():
					default:
					}
				}
			}
		})
	}
	wg.Wait()
	close(early)
	for e := range early {
		t.Error(e)
	}
	if n := h.maxSpin.Load(); n > 2 {
		t.Errorf("%d goroutines spun at once for the holders, want at most 2", n)
	}
}

// A lone holder times its own holds (holdSolo): none reaches the timing goroutine, whose
// wake would cost a thread's wake-up on every hold, and none ends early. A second holder
// holding meanwhile goes to the timing goroutine.
func TestHoldTimerLoneHolderTimesItself(t *testing.T) {
	h := newHoldTimer(newSleeper())
	go h.run()
	wake := make(chan struct{}, 1)
	for range 50 {
		d := 300 * time.Microsecond
		start := time.Now()
		late, ok := h.hold(context.Background(), d, wake)
		if took := time.Since(start); !ok || late < 0 || took < d {
			t.Fatalf("solo hold of %s took %s (late %s, ok %v)", d, took, late, ok)
		}
	}
	if n := h.timed.Load(); n != 0 {
		t.Errorf("%d of a lone holder's holds went to the timing goroutine, want 0", n)
	}
	h.solo.Store(true) // as while another holder times itself
	if _, ok := h.hold(context.Background(), time.Millisecond, wake); !ok {
		t.Fatal("a timed hold under a live context reported cut short")
	}
	h.solo.Store(false)
	if n := h.timed.Load(); n != 1 {
		t.Errorf("%d holds went to the timing goroutine while the solo slot was taken, want 1", n)
	}
}

// A lone holder's spin gives its processor up only while other goroutines wait for one: with
// nothing waiting it yields less than once a hold (a yield on every pass, as the timing
// goroutine's spin does, is a hundred or more a hold, each waking an idle thread), and with
// goroutines queued for the processors it yields to them, its holds still never early.
func TestHoldTimerSoloYieldsOnlyToWaitingGoroutines(t *testing.T) {
	h := newHoldTimer(newSleeper())
	go h.run()
	wake := make(chan struct{}, 1)
	hold := func(n int) {
		t.Helper()
		for range n {
			d := 300 * time.Microsecond
			start := time.Now()
			late, ok := h.hold(context.Background(), d, wake)
			if took := time.Since(start); !ok || late < 0 || took < d {
				t.Fatalf("solo hold of %s took %s (late %s, ok %v)", d, took, late, ok)
			}
		}
	}
	hold(50)
	if y, spun := h.yields.Load(), time.Duration(h.spinsNS.Load()); y >= 50 || spun == 0 {
		t.Errorf("a lone holder's spins (%s in all) yielded %d times in 50 holds with nothing waiting, want fewer than 50", spun, y)
	}
	if n := h.timed.Load(); n != 0 {
		t.Fatalf("%d holds went to the timing goroutine, want a lone holder's own", n)
	}

	// Goroutines that keep every processor's run queue full until told to stop.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 2 * runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
					runtime.Gosched()
				}
			}
		})
	}
	before := h.yields.Load()
	deadline := time.Now().Add(30 * time.Second)
	for h.yields.Load() == before && time.Now().Before(deadline) {
		hold(10)
	}
	close(stop)
	wg.Wait()
	if h.yields.Load() == before {
		t.Error("a lone holder's spin never yielded while goroutines waited for a processor")
	}
}

// A wake meant for a hold its context cut short does not end the holder's next hold early:
// neither one left in its channel nor one that comes during the next hold.
func TestHoldTimerIgnoresALeftoverWake(t *testing.T) {
	h := processHolds()
	wake := make(chan struct{}, 1)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, ok := h.hold(ctx, 2*shortWait, wake); ok { // its entry fires later
		t.Fatal("a hold under an ended context reported complete")
	}
	wake <- struct{}{} // as if an earlier entry had fired already
	for _, d := range []time.Duration{3 * shortWait, 20 * time.Microsecond} {
		start := time.Now()
		if _, ok := h.hold(context.Background(), d, wake); !ok {
			t.Fatal("hold cut short under a live context")
		}
		if took := time.Since(start); took < d {
			t.Errorf("hold of %s ended after %s", d, took)
		}
	}
}

// Ending the holder's context ends its hold without waiting for the deadline.
func TestHoldTimerEndsWithTheContext(t *testing.T) {
	h := processHolds()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan bool)
	go func() {
		_, ok := h.hold(ctx, time.Hour, make(chan struct{}, 1))
		done <- ok
	}()
	cancel()
	select {
	case ok := <-done:
		if ok {
			t.Error("a hold cut by its context reported complete")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("an hour's hold did not end with its context")
	}
}

// The window before a deadline follows how late the sleeper's wake-ups were, within its
// bounds.
func TestHoldTimerWindowFollowsLateness(t *testing.T) {
	var h lateness
	for range 64 {
		h.observe(int64(10 * time.Microsecond))
	}
	if w := time.Duration(h.window.Load()); w != minWindow {
		t.Errorf("window %s after punctual wake-ups, want the least, %s", w, minWindow)
	}
	for range 64 {
		h.observe(int64(200 * time.Microsecond))
	}
	if w, want := time.Duration(h.window.Load()), 200*time.Microsecond+windowMargin; w != want {
		t.Errorf("window %s after wake-ups 200µs late, want %s", w, want)
	}
	for range 64 {
		h.observe(int64(time.Second))
	}
	if w := time.Duration(h.window.Load()); w != maxWindow {
		t.Errorf("window %s after wake-ups a second late, want the most, %s", w, maxWindow)
	}
}

func TestHoldErrorsPercentiles(t *testing.T) {
	var e holdErrors
	if e.percentiles() != nil {
		t.Error("percentiles without a hold")
	}
	for i := range 99 {
		e.add(time.Duration(i%10) * time.Microsecond)
	}
	e.add(5 * time.Second) // a hold a stall stretched
	p := e.percentiles()
	if p == nil || p.Count != 100 || p.P50 > 9 || p.Max < 4_990_000 {
		t.Errorf("percentiles %+v, want 100 counted, p50 below 10µs, max about 5s", p)
	}
}

// While another hold waits for the timing goroutine, a hold goes there too, and a solo
// holder that sees one come leaves its own hold to it: two spinners would take both
// processors of a small machine from the holders' round trips.
func TestHoldTimerSoloDefersToWaitingHolds(t *testing.T) {
	h := newHoldTimer(newSleeper())
	go h.run()
	h.add(holdClock()+int64(time.Hour), make(chan struct{}, 1)) // a hold waiting for the timing goroutine
	if _, ok := h.hold(context.Background(), time.Millisecond, make(chan struct{}, 1)); !ok {
		t.Fatal("a hold under a live context reported cut short")
	}
	if n := h.timed.Load(); n != 2 {
		t.Errorf("%d holds went to the timing goroutine, want 2: a hold beside a waiting one timed itself", n)
	}

	h = newHoldTimer(newSleeper())
	gate := gatedSleeper(make(chan struct{}))
	h.soloSleeper = gate // the solo holder's sleep ends when the test says
	go h.run()
	d := 20 * time.Millisecond
	type result struct {
		took time.Duration
		ok   bool
	}
	res := make(chan result, 1)
	go func() {
		start := time.Now()
		_, ok := h.hold(context.Background(), d, make(chan struct{}, 1))
		res <- result{time.Since(start), ok}
	}()
	for limit := time.Now().Add(30 * time.Second); !h.solo.Load(); {
		if time.Now().After(limit) {
			t.Fatal("the lone holder never took the solo slot")
		}
		time.Sleep(50 * time.Microsecond)
	}
	h.add(holdClock()+int64(time.Hour), make(chan struct{}, 1)) // another hold comes meanwhile
	close(gate)
	select {
	case r := <-res:
		if !r.ok || r.took < d {
			t.Errorf("hold of %s took %s (ok %v)", d, r.took, r.ok)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the hold never ended")
	}
	if n := h.timed.Load(); n != 2 {
		t.Errorf("%d holds went to the timing goroutine, want 2: the solo holder kept timing itself beside a waiting hold", n)
	}
}

// gatedSleeper's sleep ends when its channel is closed.
type gatedSleeper chan struct{}

func (gatedSleeper) arm(time.Duration) {}
func (g gatedSleeper) wait()           { <-g }
