package strategies_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/redistest"
	"github.com/lockbench/lockbench/strategies"
)

// TestConformance runs every registered strategy through the same behaviours. A new
// strategy gets the whole table by registering; what a strategy does not claim (Info) it is
// not held to here — the weakness tests prove those gaps instead.
func TestConformance(t *testing.T) {
	// The watchdog's hold lasts seconds (some 10s: see holdTTL) and is mostly waiting. Every
	// renewing strategy's hold starts here, all at once, before any case runs; they go on
	// beside the cases, and WatchdogRenews, the last case of each strategy, judges its own.
	// Started inside each strategy's subtest, a hold kept one of the few parallel slots
	// (-parallel is GOMAXPROCS: 2 on CI) waiting for 10s, strategy after strategy.
	held := map[string]*env{}
	for _, name := range strategies.Names() {
		if info, _ := strategies.Lookup(name); info.AutoRenew {
			e := newEnv(t, name)
			e.hold = startHold(t, e, redistest.Prefix(t)+name+":wd")
			held[name] = e
		}
	}
	for _, name := range strategies.Names() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := held[name]
			if e == nil {
				e = newEnv(t, name)
			}
			info, _ := strategies.Lookup(name)
			for _, c := range conformance {
				t.Run(c.name, func(t *testing.T) {
					if c.applies != nil && !c.applies(info) {
						t.Skipf("%s does not claim this", name)
					}
					c.run(t, e, redistest.Prefix(t))
				})
			}
		})
	}
}

var conformance = []struct {
	name    string
	applies func(strategies.Info) bool
	run     func(t *testing.T, e *env, prefix string)
}{
	// 20 contenders on one key, under each wait policy: at every release some 19 are
	// waiting, which is what mutual exclusion is tested by. A spinner retries every 1ms,
	// and 50 of them on redlock's five masters cost the suite half a minute of CPU; 50
	// waiters backing off or woken by a message cost the suite ~20 CPU-seconds for the
	// same 19-to-one contention, their attempts growing as the square of their number
	// (each of 10 rounds of each worker waits behind all the others).
	{"MutualExclusion/spin", safe, mutualExclusion("spin:1ms", 20)},
	{"MutualExclusion/backoff", safe, mutualExclusion("backoff:1ms..20ms", 20)},
	{"MutualExclusion/pubsub", safe, mutualExclusion("pubsub", 20)},
	{"ExpiresAfterTTL", expires, expiresAfterTTL},
	{"ReleaseByNonOwner", func(i strategies.Info) bool { return i.SafeUnlock }, releaseByNonOwner},
	{"ReleaseTwice", nil, releaseTwice},
	{"CancelWhileWaiting/backoff", nil, cancelWhileWaiting("backoff")},
	{"CancelWhileWaiting/pubsub", nil, cancelWhileWaiting("pubsub")},
	{"Reentry", func(i strategies.Info) bool { return i.Reentrant }, reentry},
	{"SameOwnerContends", func(i strategies.Info) bool { return !i.Reentrant }, sameOwnerContends},
	{"EmptyKey", nil, emptyKey},
	{"PermitsBound/backoff", semaphores, permitsBound("backoff:1ms..20ms")},
	{"PermitsBound/pubsub", semaphores, permitsBound("pubsub")},
	{"SharedReaders", shared, sharedReaders},
	{"SetAllOrNone", sets, setAllOrNone},
	{"WatchdogRenews", func(i strategies.Info) bool { return i.AutoRenew }, watchdogRenews}, // last: see startHold
}

func safe(i strategies.Info) bool { return i.SafeWithoutFaults }

// expires: a dead holder's lock frees itself. RSemaphore's permits never do; its weakness
// test proves the leak instead.
func expires(i strategies.Info) bool { return i.Name != "semaphore" }

func semaphores(i strategies.Info) bool { return i.Capacity == strategies.CapacitySemaphore }
func shared(i strategies.Info) bool     { return i.Capacity == strategies.CapacityRW }
func sets(i strategies.Info) bool       { return i.Capacity == strategies.CapacitySet }

// mutualExclusion: workers goroutines take one key 10 times each; a holder counter must never
// exceed 1 and every acquisition must complete.
func mutualExclusion(wait string, workers int) func(t *testing.T, e *env, prefix string) {
	return func(t *testing.T, e *env, prefix string) {
		w, err := strategies.ParseWait(wait)
		if err != nil {
			t.Fatal(err)
		}
		s := e.strategy(t, func(o *strategies.Options) { o.Wait = w })
		const rounds = 10
		key := prefix + "hot"
		var inside, maxInside, done atomic.Int32
		var wg sync.WaitGroup
		errs := make(chan error, workers)
		for i := range workers {
			wg.Go(func() {
				owner := fmt.Sprintf("w%d", i)
				for range rounds {
					ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
					l, err := s.Acquire(ctx, key, owner)
					cancel()
					if err != nil {
						errs <- err
						return
					}
					n := inside.Add(1)
					for m := maxInside.Load(); n > m && !maxInside.CompareAndSwap(m, n); m = maxInside.Load() {
					}
					time.Sleep(50 * time.Microsecond) // widen the window an overlap needs
					inside.Add(-1)
					if err := l.Release(context.Background()); err != nil {
						errs <- err
						return
					}
					done.Add(1)
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("worker: %v", err)
		}
		if m := maxInside.Load(); m != 1 {
			t.Fatalf("%d holders were inside at once, want 1", m)
		}
		if d := int(done.Load()); d != workers*rounds {
			t.Fatalf("%d acquisitions completed, want %d", d, workers*rounds)
		}
	}
}

// expiresAfterTTL: a holder that never releases blocks others only until its ttl passes.
// What is judged is a lower bound, which a stalled machine only widens: the lock came free
// no sooner than its ttl. The other client retries as often as the default backoff does,
// but for getset: each of its failed attempts writes a new timestamp, which would keep the
// lock fresh (TestWeaknessGetsetRetriesKeepDeadLockFresh), so it tries at once and then
// every one and a half ttls. (That getset takes over no sooner than the ttl, the same test
// shows on its clock.)
func expiresAfterTTL(t *testing.T, e *env, prefix string) {
	const ttl = 200 * time.Millisecond
	s := e.strategy(t, withTTL(ttl))
	other := e.strategy(t, func(o *strategies.Options) {
		o.TTL = strategies.TTLOf(ttl) // the timestamp strategies judge staleness by the contender's ttl
		if !s.Info().KeyTTL {
			o.Wait = strategies.Wait{Kind: strategies.WaitSpin, Interval: ttl * 3 / 2}
		}
	})
	key := prefix + "k"
	start := time.Now()
	acquire(t, s, key, "crashed") // never released
	l, err := tryFor(other, key, "b", patience)
	if err != nil {
		t.Fatalf("lock still held %s after it was taken with a ttl of %s: %v", patience, ttl, err)
	}
	got := time.Now()
	// Redis and the timestamp strategies count the ttl in whole milliseconds.
	if took := got.Sub(start); took < ttl-2*time.Millisecond {
		t.Fatalf("another client took the lock %s after it was taken with a ttl of %s", took, ttl)
	}
	// b's lease is as short (the timestamp strategies judge staleness by it): a starved
	// machine that comes back to the release after the ttl finds the lock lapsed, which is
	// not this case's subject (beside two busy loops fair's release came late 1 run in 3).
	// That a release inside its lease succeeds, ReleaseTwice and ReleaseByNonOwner hold
	// every strategy to, on leases that cannot lapse first; any other error fails here.
	if err := l.Release(context.Background()); err != nil && !errors.Is(err, strategies.ErrNotOwner) {
		t.Fatalf("Release %s after the acquire: %v", time.Since(got), err)
	}
}

// releaseByNonOwner: a holder whose lease expired and was taken by someone else must not be
// able to release the new holder's lock.
func releaseByNonOwner(t *testing.T, e *env, prefix string) {
	const ttl = 150 * time.Millisecond
	s := e.strategy(t, withTTL(ttl))
	// The new holder is another client whose lease outlasts the test: on the short ttl a
	// stall could let its lock lapse before the checks, and a release that deleted it could
	// not be told from one that found nothing.
	other := e.strategy(t, withTTL(time.Minute))
	key := prefix + "k"
	old := acquire(t, s, key, "a")
	cur := acquire(t, other, key, "b") // once a's lease ran out
	if err := old.Release(context.Background()); !errors.Is(err, strategies.ErrNotOwner) {
		t.Fatalf("release of an expired lease: want ErrNotOwner, got %v", err)
	}
	mustBeBusy(t, s, key, "c") // b still holds it
	release(t, cur)
}

func releaseTwice(t *testing.T, e *env, prefix string) {
	s := e.strategy(t, nil)
	l := acquire(t, s, prefix+"k", "a")
	release(t, l)
	if err := l.Release(context.Background()); !errors.Is(err, strategies.ErrReleased) {
		t.Fatalf("second Release: want ErrReleased, got %v", err)
	}
}

// cancelWhileWaiting: cancelling a waiter returns promptly with ErrNotAcquired and the
// cause, and leaves nothing behind that delays the next acquirer. The lease is a minute
// long, so "promptly" needs no tight bound: a waiter that missed the cancel would sleep
// until a fallback timer or the ttl, far past the limit.
func cancelWhileWaiting(wait string) func(t *testing.T, e *env, prefix string) {
	return func(t *testing.T, e *env, prefix string) {
		w, _ := strategies.ParseWait(wait)
		s := e.strategy(t, func(o *strategies.Options) { o.Wait = w; o.TTL = strategies.TTLOf(time.Minute) })
		key := prefix + "k"
		holder := acquire(t, s, key, "holder")

		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		got := make(chan error, 1)
		before := s.Stats().FailedAttempts
		go func() {
			_, err := s.Acquire(ctx, key, "waiter") // no deadline: it waits until cancelled
			got <- err
		}()
		waitFor(t, func() bool { return s.Stats().FailedAttempts > before }) // it waits now
		cancel()
		var err error
		select {
		case err = <-got:
		case <-time.After(patience):
			t.Fatalf("a cancelled wait had not returned after %s", patience)
		}
		if !errors.Is(err, strategies.ErrNotAcquired) || !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled wait: want ErrNotAcquired and context.Canceled, got %v", err)
		}
		release(t, holder)
		release(t, acquireFree(t, s, key, "next")) // no residue (a queue entry) in the way
	}
}

// reentry: the same owner re-enters without waiting; the lock is free only after the last
// release. The lease is a minute long, so a strategy that made the holder wait for its own
// lock would not get it back within patience.
func reentry(t *testing.T, e *env, prefix string) {
	s := e.strategy(t, withTTL(time.Minute))
	key := prefix + "k"
	outer := acquire(t, s, key, "a")
	before := s.Stats().FailedAttempts
	inner := acquire(t, s, key, "a")
	if n := s.Stats().FailedAttempts - before; n != 0 {
		t.Fatalf("re-entry by the holder waited: %d failed attempts", n)
	}
	release(t, inner)
	mustBeBusy(t, s, key, "b")
	release(t, outer)
	release(t, acquireFree(t, s, key, "b"))
}

// sameOwnerContends: a non-reentrant strategy treats the holder asking again as contention.
func sameOwnerContends(t *testing.T, e *env, prefix string) {
	s := e.strategy(t, nil)
	key := prefix + "k"
	l := acquire(t, s, key, "a")
	mustBeBusy(t, s, key, "a")
	release(t, l)
}

// watchdogRenews: with renewal on, a hold longer than the ttl keeps the lock; renewal stops
// with the release. The hold began with the strategy's run (startHold).
func watchdogRenews(t *testing.T, e *env, _ string) {
	e.hold.check(t)
}

// hold is a lease kept with a watchdog on auto past its ttl, beside one let go once its
// watchdog ran. Nothing is timed: BeforeRenew counts each lease's renewals, and a lease whose
// watchdog ran interval after interval (ttl/3 each) is past its ttl. The ttl is seconds
// long: a lease is lost only when no renewal gets through for 4s. With a ttl of 3s (2s
// without a renewal) redisson-lock's lease was lost at load 34: its watchdog, Redisson's,
// gives a renewal an interval to answer and tries again an interval later, and a starved
// process under the race detector went past both.
type hold struct {
	s    strategies.Strategy
	key  string
	kept strategies.Lease

	mu    sync.Mutex
	calls map[string]int // BeforeRenew calls per owner

	letGone  chan struct{} // closed once "let" was released
	letErr   error
	stopped  int // let's calls when its release returned
	keptThen int // kept's calls then
}

const holdTTL = 6 * time.Second

// startHold takes key for "kept" and key+":let" for "let", and releases let once its
// watchdog ran; check judges both.
func startHold(t *testing.T, e *env, key string) *hold {
	t.Helper()
	h := &hold{key: key, calls: map[string]int{}, letGone: make(chan struct{})}
	letRenews := make(chan struct{})
	h.s = e.strategy(t, func(o *strategies.Options) {
		o.TTL = strategies.TTLOf(holdTTL)
		o.Watchdog = strategies.Watchdog{Auto: true}
		o.Hooks.BeforeRenew = func(_ context.Context, _, owner string) {
			h.mu.Lock()
			h.calls[owner]++
			if owner == "let" && h.calls[owner] == 1 {
				close(letRenews)
			}
			h.mu.Unlock()
		}
	})
	h.kept = acquire(t, h.s, key, "kept")
	let := acquire(t, h.s, key+":let", "let")
	go func() {
		defer close(h.letGone)
		select {
		case <-letRenews:
		case <-time.After(patience):
			h.letErr = errors.New("its watchdog never ran")
			return
		}
		h.letErr = let.Release(context.Background())
		h.stopped, h.keptThen = h.count("let"), h.count("kept")
	}()
	return h
}

func (h *hold) count(owner string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.calls[owner]
}

func (h *hold) check(t *testing.T) {
	t.Helper()
	select {
	case <-h.letGone:
	case <-time.After(patience):
		t.Fatalf("the second lease was not released within %s", patience)
	}
	if h.letErr != nil {
		t.Fatalf("the second lease: %v", h.letErr)
	}
	// kept's 5th call comes an interval after its 4th renewal returned: 4/3 of the ttl on.
	// Two more calls than at let's release: a whole interval in which let had to stay quiet.
	pollUntil(t, "kept's watchdog to run past the ttl", func() bool {
		n := h.count("kept")
		return n >= 5 && n >= h.keptThen+2 && h.s.Stats().Renewals >= 4
	})
	mustBeBusy(t, h.s, h.key, "b")
	select {
	case <-h.kept.Lost():
		t.Fatal("lease reported lost while the watchdog should keep it")
	default:
	}
	if n := h.count("let"); n != h.stopped {
		t.Fatalf("renewals went on after release: %d -> %d", h.stopped, n)
	}
	release(t, h.kept)
	release(t, acquireFree(t, h.s, h.key, "b"))
}

func emptyKey(t *testing.T, e *env, _ string) {
	s := e.strategy(t, nil)
	_, err := s.Acquire(context.Background(), "", "a")
	var oe *strategies.OptionError
	if !errors.As(err, &oe) || oe.Field != "key" {
		t.Fatalf("empty key: want an OptionError naming key, got %v", err)
	}
}
