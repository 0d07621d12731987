package workload

import (
	"container/heap"
	"context"
	"runtime"
	"runtime/metrics"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// holdTimer ends the process's holds on time with at most two goroutines spinning, however
// many holders there are (issue 32, item 3).
//
// A holder's sleep cannot end it: Go's timers wake through epoll with millisecond timeouts,
// so (measured on this project's 2-core VM) a 500µs sleep lasts 1.1ms and a 1ms one
// 1.14ms. Holders used to spin their last 1.5 ms each, which on a hot key (100 workers, hold
// 1 ms, about 850 holds a second) kept a core busy for nothing: 1.25 ms of CPU per acquire.
//
// Here a holder registers its deadline and parks on its own channel. One timing goroutine
// keeps the deadlines in a heap, sleeps until the earliest is a window away, spins (yielding
// to whatever else is runnable) through that window and wakes the holder at its deadline,
// on the processor it spins on: the holder runs next there. The sleep is one the kernel
// ends precisely (a timerfd in the netpoller on Linux: holdtimer_linux.go; a Go timer
// elsewhere), and the window is what the last wake-ups were late by (about the 97th
// percentile of the last 64, plus a margin, between minWindow and maxWindow), so a quiet
// machine spins little and a busy one enough to stay on time. The spinning is the timing
// goroutine's alone: while nobody holds, or the next deadline is far, nothing spins.
//
// A holder never leaves early: it checks the clock when woken, and parks again when a wake
// came before its deadline (one left over from a hold its context cut short).
//
// One holder at a time times itself instead (holdSolo), on a sleeper of its own: the same
// sleep and window, and a spin that yields only while other goroutines wait for a
// processor, with no goroutine to wake at the end. Waking a parked goroutine
// costs the waker a thread's wake-up whenever a processor is idle, which on this VM (its
// idle vCPUs halted) made the timing goroutine's wake 33 µs late at the median, quiet, and
// the hold with it (session 10, docs/performance.md). A hot key has one holder at a time, who
// then never waits for another goroutine. Where holds overlap, they all go through the
// timing goroutine: a solo holder that sees another hold waiting there hands its own over
// (holdSolo), so two goroutines spin at once only for that moment.
type holdTimer struct {
	mu       sync.Mutex
	due      holdHeap
	sleeping bool  // the timing goroutine waits for its sleeper; add arms it for an earlier deadline
	armedAt  int64 // when the sleeper is set to wake, in holdClock ns; 0 = not armed
	sleeper  sleeper
	late     lateness // the sleeper's, timing goroutine only

	// While it spins, the timing goroutine spins until earliest: add lowers it for an
	// earlier deadline.
	earliest atomic.Int64
	// dueLen is len(due), stored under mu and read without it: a solo holder leaves its hold
	// to the timing goroutine while other holds wait there.
	dueLen atomic.Int32

	solo        atomic.Bool // a holder times itself (holdSolo); its sleeper, lateness and probe are its own
	soloSleeper sleeper
	soloLate    lateness
	soloProbe   *runnableProbe

	spinsNS atomic.Int64 // time spent spinning, for tests and the docs
	yields  atomic.Int64 // the spins' yields of their processor, for tests
	timed   atomic.Int64 // holds the timing goroutine ended (not solo), for tests
	spinner atomic.Int32 // goroutines spinning now: at most 2 (the timing goroutine and a solo holder)
	maxSpin atomic.Int32 // the most that ever spun at once
}

// lateness is how late a sleeper's last wake-ups came, and the window it sets: how long
// before a deadline the sleep ends and the spin begins. One goroutine at a time observes.
type lateness struct {
	window atomic.Int64 // ns
	late   [64]int64    // ns
	n      int
}

// sleeper is the timing goroutine's sleep, and the solo holder's: arm sets it to end d from
// now (d > 0; an earlier arm is replaced), and wait blocks until it ends (or returns early:
// the timing goroutine looks at the heap again either way, the solo holder spins the rest).
// The timing goroutine arms its sleeper under holdTimer.mu and waits without it; the solo
// holder, alone on its own sleeper, needs no lock.
type sleeper interface {
	arm(d time.Duration)
	wait()
}

const (
	minWindow = 50 * time.Microsecond
	// maxWindow bounds the spin per deadline: where wake-ups are later than that (a machine
	// whose CPUs other work keeps busy), spinning longer would not keep the holds on time
	// either — the spinner waits for a CPU like the rest — and the holds' error says so.
	maxWindow = 500 * time.Microsecond
	// windowMargin is added to the observed lateness of the sleeper's wake-ups. The holds'
	// p99 error comes from wake-ups later than the window, which no margin of a few tens of
	// µs covers: on the hot key 15 µs read the same p99 as 30 (median 41 against 44 µs) for
	// 1.5 points of a core less, and 60 more CPU for no lower p99 (docs/performance.md,
	// sessions 10 and 11).
	windowMargin = 15 * time.Microsecond
)

type holdEntry struct {
	at   int64 // deadline, holdClock ns
	wake chan struct{}
}

type holdHeap []holdEntry

func (h holdHeap) Len() int           { return len(h) }
func (h holdHeap) Less(i, j int) bool { return h[i].at < h[j].at }
func (h holdHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *holdHeap) Push(x any)        { *h = append(*h, x.(holdEntry)) }
func (h *holdHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = holdEntry{}
	*h = old[:len(old)-1]
	return e
}

// holdOrigin is holdClock's zero: the monotonic clock as nanoseconds.
var holdOrigin = time.Now()

func holdClock() int64 { return int64(time.Since(holdOrigin)) }

var (
	holdsOnce sync.Once
	holds     *holdTimer
)

// processHolds is the process's hold timer, started on first use; its goroutine lives as
// long as the process, parked while nobody holds.
func processHolds() *holdTimer {
	holdsOnce.Do(func() {
		holds = newHoldTimer(newSleeper())
		go holds.run()
	})
	return holds
}

func newHoldTimer(s sleeper) *holdTimer {
	h := &holdTimer{sleeper: s, soloSleeper: newSleeper(), soloProbe: newRunnableProbe()}
	h.late.window.Store(int64(defaultWindow))
	h.soloLate.window.Store(int64(defaultWindow))
	return h
}

// hold parks the calling goroutine until d has passed, woken through wake (its own
// channel, buffered 1, used by one holder at a time). It returns how late it came back, or
// ok false when ctx ended first; a hold of shortWait or less ends on time whatever ctx does.
func (h *holdTimer) hold(ctx context.Context, d time.Duration, wake chan struct{}) (late time.Duration, ok bool) {
	deadline := holdClock() + int64(d)
	if d <= shortWait && h.dueLen.Load() == 0 && h.solo.CompareAndSwap(false, true) {
		late, alone := h.holdSolo(deadline)
		h.solo.Store(false)
		if alone {
			return late, true
		}
		// Others came to hold meanwhile: the timing goroutine times this hold with theirs.
	}
	select { // a wake left over from a hold cut short
	case <-wake:
	default:
	}
	h.add(deadline, wake)
	var done <-chan struct{} // a short hold does not take the lock of ctx's channel, shared by every worker
	if d > shortWait {
		done = ctx.Done()
	}
	for {
		select {
		case <-wake:
		case <-done:
			return 0, false
		}
		if now := holdClock(); now >= deadline {
			return time.Duration(now - deadline), true
		}
	}
}

// holdSolo times the caller's own hold to deadline: it sleeps on the solo sleeper until the
// window before it, then spins, yielding on every pass. Only the holder that set h.solo
// calls it. It gives up (alone false) as soon as it sees another hold waiting for the timing
// goroutine, which spins for those already: two spinners took both processors of this
// 2-core machine from the holders' round trips (50 workers on 50 keys holding 200 µs ran
// 22-31k/s so, against 26-36k/s with one spinner; session 10).
//
// Its spin yields only while other goroutines wait for a processor (spin, with its probe):
// a yield on every pass woke an idle thread each time, a third of the hot key's client CPU
// samples, and a spin that yielded only in its last 30 µs held a processor from every
// other goroutine's round trips until then (the same shape: 17-23k/s; docs/performance.md,
// sessions 10 and 11).
func (h *holdTimer) holdSolo(deadline int64) (late time.Duration, alone bool) {
	if start := deadline - h.soloLate.window.Load(); start > holdClock() {
		h.soloSleeper.arm(time.Duration(start - holdClock()))
		h.soloSleeper.wait()
		if woke := holdClock(); woke >= start {
			h.soloLate.observe(woke - start)
		}
	}
	now := h.spin(func() int64 { return deadline }, func() bool { return h.dueLen.Load() > 0 }, h.soloProbe)
	if now < deadline {
		return 0, false
	}
	return time.Duration(now - deadline), true
}

func (h *holdTimer) add(at int64, wake chan struct{}) {
	h.timed.Add(1)
	h.mu.Lock()
	heap.Push(&h.due, holdEntry{at: at, wake: wake})
	h.dueLen.Store(int32(len(h.due)))
	if h.sleeping {
		if start := at - h.late.window.Load(); h.armedAt == 0 || start < h.armedAt {
			h.armedAt = start
			h.sleeper.arm(time.Duration(max(start-holdClock(), 1)))
		}
	} else if at < h.earliest.Load() {
		h.earliest.Store(at)
	}
	h.mu.Unlock()
}

// run is the timing goroutine: wake the holders due, then sleep or spin until the next.
func (h *holdTimer) run() {
	h.mu.Lock()
	for {
		now := holdClock()
		for len(h.due) > 0 && h.due[0].at <= now {
			e := heap.Pop(&h.due).(holdEntry)
			select {
			case e.wake <- struct{}{}:
			default: // a wake is pending already
			}
		}
		h.dueLen.Store(int32(len(h.due)))
		if len(h.due) == 0 || h.due[0].at-now > h.late.window.Load() {
			h.sleeping, h.armedAt = true, 0
			if len(h.due) > 0 {
				h.armedAt = h.due[0].at - h.late.window.Load()
				h.sleeper.arm(time.Duration(h.armedAt - now))
			} // else the sleeper is not armed: it ended the last sleep, or was never set
			h.mu.Unlock()
			h.sleeper.wait()
			h.mu.Lock()
			woke := holdClock()
			if h.armedAt != 0 && woke >= h.armedAt {
				h.late.observe(woke - h.armedAt)
			}
			h.sleeping, h.armedAt = false, 0
			h.earliest.Store(1<<63 - 1)
			continue
		}
		h.earliest.Store(h.due[0].at)
		h.mu.Unlock()
		h.spin(h.earliest.Load, nil, nil)
		h.mu.Lock()
		h.earliest.Store(1<<63 - 1)
	}
}

// spin spins until until() has come, or until stop (when not nil) says to stop, and returns
// the clock then. Without a probe it yields its processor on every pass (the timing
// goroutine). With one (the solo holder) it yields only while other goroutines wait for a
// processor, asking the probe every probeEvery: a yield while a processor is idle wakes a
// thread to look for work (the runtime's wakep), and on the hot key, where nothing else
// waits while the holder spins, those yields were a third of lockbench's CPU; a spin that
// never yields held a processor from the workers' round trips where holds overlap
// (docs/performance.md, sessions 10 and 11). The timing goroutine's spin kept yielding on
// every pass: with the probe, the quickstart's shape (50 keys held 200 µs) read a hold
// error p50 of 5-7 µs against 2-3 (session 11).
func (h *holdTimer) spin(until func() int64, stop func() bool, probe *runnableProbe) int64 {
	if n := h.spinner.Add(1); n > h.maxSpin.Load() {
		h.maxSpin.Store(n)
	}
	from := holdClock()
	now, checked := from, from-probeEvery
	for now < until() && (stop == nil || !stop()) {
		switch {
		case probe == nil:
			runtime.Gosched()
			h.yields.Add(1)
		case now-checked >= probeEvery:
			if probe.waiting() {
				runtime.Gosched()
				h.yields.Add(1)
			}
			checked = holdClock()
		}
		now = holdClock()
	}
	h.spinsNS.Add(now - from)
	h.spinner.Add(-1)
	return now
}

// probeEvery is how often a spin asks whether goroutines wait for a processor: the longest
// a goroutine readied on the spinner's processor waits for it, and a read of the runtime's
// scheduler state (about 100 ns, under its lock) per that much spinning.
const probeEvery = int64(2 * time.Microsecond)

// runnableProbe reads how many goroutines wait for a processor: the runtime's
// /sched/goroutines/runnable metric, the goroutines in every run queue (about 100 ns, no
// allocation). Each spinner has its own, since concurrent reads may not share samples.
type runnableProbe [1]metrics.Sample

func newRunnableProbe() *runnableProbe {
	return &runnableProbe{{Name: "/sched/goroutines/runnable:goroutines"}}
}

// waiting reports whether any goroutine waits for a processor; true where the runtime has
// no such metric, so that a spin then yields on every check.
func (p *runnableProbe) waiting() bool {
	metrics.Read(p[:])
	return p[0].Value.Kind() != metrics.KindUint64 || p[0].Value.Uint64() > 0
}

// observe notes how late a sleep ended, and sets the window from the last 64 such.
func (l *lateness) observe(late int64) {
	l.late[l.n%len(l.late)] = late
	l.n++
	if l.n%8 != 0 {
		return
	}
	n := min(l.n, len(l.late))
	s := slices.Clone(l.late[:n])
	slices.Sort(s)
	q := s[n-1-n/32] // about the 97th percentile: the second worst of 64
	l.window.Store(min(max(q+int64(windowMargin), int64(minWindow)), int64(maxWindow)))
}
