package faults_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/workload"
)

// A busy machine stretches every time a test could fix in advance: a fault set for 1s fires
// late, a second of the timeline lasts five, a reconnect takes a second. So the node-fault
// tests run their phase until they have seen what they need — the fault applied and lifted,
// so many acquires after it — and then end it as Ctrl-C does, with the phase's duration as
// a generous deadline. They judge counts between the fault's events, and a rate against
// the same run's rate before the fault, never against the clock.
//
// watch sees one phase as it runs. It wraps the phase's faults.Set: Stall runs in every
// critical section, so it counts the acquires as they happen (warm-up included), and each
// fault event is marked with that count at the moment the fault reports it. A poll loop
// samples the count, so that a count can be placed in time.
type watch struct {
	workload.Faults
	entered atomic.Uint64 // critical sections entered so far
	longD   time.Duration // a stall at least this long, begun in the window, counts in long
	long    atomic.Uint64

	mu          sync.Mutex
	windowStart time.Time
	marks       []mark
	samples     []sample    // the poll loop's readings of entered, in time order
	ticks       []time.Time // the timeline's samples, from the engine's progress reports
	overlaps    uint64      // in the window so far, as of the last progress report
	doneAt      time.Time   // when the test had seen enough
}

// mark is a fault event with the number of acquires made before it.
type mark struct {
	report.Event
	at      time.Time
	entered uint64
}

type sample struct {
	at      time.Time
	entered uint64
}

func (w *watch) Stall(ctx context.Context, worker int, owner string) {
	w.entered.Add(1)
	if w.longD == 0 {
		w.Faults.Stall(ctx, worker, owner)
		return
	}
	start := time.Now()
	w.Faults.Stall(ctx, worker, owner)
	w.mu.Lock()
	inWindow := !start.Before(w.windowStart)
	w.mu.Unlock()
	if inWindow && time.Since(start) >= w.longD {
		w.long.Add(1)
	}
}

func (w *watch) Run(ctx context.Context, windowStart time.Time, emit func(report.Event)) {
	w.mu.Lock()
	w.windowStart = windowStart
	w.mu.Unlock()
	w.Faults.Run(ctx, windowStart, func(e report.Event) {
		m := mark{Event: e, at: time.Now(), entered: w.entered.Load()}
		w.mu.Lock()
		w.marks = append(w.marks, m)
		w.mu.Unlock()
		emit(e)
	})
}

// find returns the first event of fault whose text contains what.
func (w *watch) find(fault, what string) (mark, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	i := slices.IndexFunc(w.marks, func(m mark) bool { return m.Fault == fault && strings.Contains(m.What, what) })
	if i < 0 {
		return mark{}, false
	}
	return w.marks[i], true
}

// get is find for an event the test has already waited for.
func (w *watch) get(t *testing.T, fault, what string) mark {
	t.Helper()
	m, ok := w.find(fault, what)
	if !ok {
		t.Fatalf("no event of %q saying %q", fault, what)
	}
	return m
}

// ramp is the fewest acquires a rate after a fault is measured over.
const ramp = 50

// span is how many acquires a rate after a fault is measured over: half of those made
// before applied, so that at the same pace it spans about as long as the rate before
// (other work on the machine swings a second's rate threefold; a long span evens it out).
func span(applied mark) uint64 { return max(ramp, applied.entered/2) }

// recovering is the least share of the rate before a fault that the rate after it must
// reach. Not a quarter: the rates before and after are taken seconds apart, and a busy
// machine's other work made them differ fourfold (52/s after the kills, 213/s before, with
// redlock going on as it should). An eighth still tells a service that came back from one
// that did not (0) or that crawls.
const recovering = 1.0 / 8

// recovered reports whether the fault's applied and lifted events have both been reported,
// and twice span(applied) acquires made after lifted: enough for rateAfter.
func (w *watch) recovered(fault, applied, lifted string) bool {
	a, ok := w.find(fault, applied)
	l, ok2 := w.find(fault, lifted)
	return ok && ok2 && w.entered.Load() >= l.entered+2*span(a)
}

// overlapsSoFar is how many overlaps the oracle saw in the window, as of its last report.
func (w *watch) overlapsSoFar() uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.overlaps
}

// ticksAfter is how many timeline samples were taken after at.
func (w *watch) ticksAfter(at time.Time) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, tk := range w.ticks {
		if tk.After(at) {
			n++
		}
	}
	return n
}

// longestGap is the longest time between two of the poll loop's samples: how long the
// test's process went without running a goroutine that wakes every 10ms. A machine that
// starves the whole process (a busy host's stolen CPU, another package's tests) freezes
// the watchdog with it, which is process-pause, not the fault a test means to apply.
func (w *watch) longestGap() time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	var gap time.Duration
	for i := 1; i < len(w.samples); i++ {
		gap = max(gap, w.samples[i].at.Sub(w.samples[i-1].at))
	}
	return gap
}

// window is the time between two samples of a watch and the acquires made in between.
type window struct {
	from, to time.Time
	acquires uint64
}

func (x window) rate() float64 {
	if !x.to.After(x.from) {
		return 0
	}
	return float64(x.acquires) / x.to.Sub(x.from).Seconds()
}

// between is the window between the first samples at which from and to acquires had been
// made; false when the samples do not span that.
func (w *watch) between(from, to uint64) (window, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	i := slices.IndexFunc(w.samples, func(s sample) bool { return s.entered >= from })
	j := slices.IndexFunc(w.samples, func(s sample) bool { return s.entered >= to })
	if i < 0 || j <= i {
		return window{}, false
	}
	a, b := w.samples[i], w.samples[j]
	return window{from: a.at, to: b.at, acquires: b.entered - a.entered}, true
}

// rate is the acquires per second between the first samples at which from and to acquires
// had been made; 0 when the samples do not span that.
func (w *watch) rate(from, to uint64) float64 {
	x, _ := w.between(from, to)
	return x.rate()
}

// rateOver is the acquire rate between the first samples taken at or after from and to:
// a phase run beside another (control), over a window of the other's.
func (w *watch) rateOver(from, to time.Time) float64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	i := slices.IndexFunc(w.samples, func(s sample) bool { return !s.at.Before(from) })
	j := slices.IndexFunc(w.samples, func(s sample) bool { return !s.at.Before(to) })
	if i < 0 || j <= i {
		return 0
	}
	a, b := w.samples[i], w.samples[j]
	return window{from: a.at, to: b.at, acquires: b.entered - a.entered}.rate()
}

// rateBefore is the acquire rate up to m, leaving out the first quarter of the acquires
// made before it (connections, the first round of contention). The slice of samples after
// the last one before m is left out, so that the rate is not diluted by the fault.
func (w *watch) rateBefore(t *testing.T, m mark) float64 {
	t.Helper()
	return w.windowBefore(t, m).rate()
}

// windowBefore is the window rateBefore takes its rate over.
func (w *watch) windowBefore(t *testing.T, m mark) window {
	t.Helper()
	skip := m.entered / 4
	w.mu.Lock()
	defer w.mu.Unlock()
	i := slices.IndexFunc(w.samples, func(s sample) bool { return s.entered >= skip })
	j := -1
	for k, s := range w.samples {
		if !s.at.After(m.at) {
			j = k
		}
	}
	if i < 0 || j <= i || w.samples[j].entered < w.samples[i].entered+10 {
		t.Fatalf("%d acquires before %q: too few to take a rate from", m.entered, m.What)
	}
	a, b := w.samples[i], w.samples[j]
	return window{from: a.at, to: b.at, acquires: b.entered - a.entered}
}

// rateAfter is the acquire rate over the n acquires that followed the first n after m (the
// first n are the clients reconnecting); the test has waited for 2n.
func (w *watch) rateAfter(m mark, n uint64) float64 {
	return w.rate(m.entered+n, m.entered+2*n)
}

// windowAfter is the window rateAfter takes its rate over.
func (w *watch) windowAfter(m mark, n uint64) (window, bool) {
	return w.between(m.entered+n, m.entered+2*n)
}

// failures sums the errors and timeouts of r's timeline samples that overlap the time from
// a to b, as the window counts it.
func failures(r report.Result, a, b float64) uint64 {
	var n uint64
	prev := 0.0
	for _, s := range r.Timeline {
		if s.TS > a && prev < b {
			n += s.Errors + s.Timeouts
		}
		prev = s.TS
	}
	return n
}

// watchPhase runs cfg's one phase, watched, until done says the test has seen enough, and
// then ends it as Ctrl-C does. cfg.Duration is the deadline: a phase that runs out of it
// before done holds fails the test. It returns the result as the JSON report has it.
func (b *bench) watchPhase(t *testing.T, cfg workload.Config, w *watch, done func(*watch) bool) report.Result {
	t.Helper()
	if len(cfg.Phases) != 1 {
		t.Fatalf("watchPhase runs one phase, not %d", len(cfg.Phases))
	}
	o := b.watchedOptions(w)
	o.Progress = func(p workload.Progress) {
		if p.Warmup {
			return
		}
		w.mu.Lock()
		w.ticks = append(w.ticks, time.Now())
		w.overlaps = p.Overlaps
		w.mu.Unlock()
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := b.runAsync(ctx, cfg, o)
	poll := time.NewTicker(10 * time.Millisecond)
	defer poll.Stop()
	var got runOutcome
	ended := false
wait:
	for {
		select {
		case got = <-out:
			if got.err == nil {
				var events []report.Event
				for _, m := range w.marks {
					events = append(events, m.Event)
				}
				t.Fatalf("the phase ran its whole %s without the test seeing what it waits for; %d acquires, events %v", cfg.Duration, w.entered.Load(), events)
			}
			break wait
		case now := <-poll.C:
			w.mu.Lock()
			w.samples = append(w.samples, sample{at: now, entered: w.entered.Load()})
			w.mu.Unlock()
			if !ended && done(w) {
				ended = true
				w.mu.Lock()
				w.doneAt = time.Now()
				w.mu.Unlock()
				cancel()
			}
		}
	}
	if !errors.Is(got.err, context.Canceled) {
		t.Fatalf("run: %v", got.err)
	}
	if len(got.results) != 1 {
		t.Fatalf("%d results, want 1", len(got.results))
	}
	return b.viaJSON(t, cfg, got.results)[0]
}

// control runs cfg's one phase on b beside a phase that watchPhase runs, as its yardstick:
// the same machine at the same time. A loaded machine's other work swings the rate of one
// second against another fourfold, and a rate before a fault against one after it with it;
// the control's rate over the same two windows swings with them. w counts its acquires,
// sampled as watchPhase samples its own: the phase needs a fault for that (one that never
// fires will do), since the engine calls Stall only with faults. end stops it as Ctrl-C
// does and returns its result.
func (b *bench) control(t *testing.T, cfg workload.Config, w *watch) (end func() report.Result) {
	t.Helper()
	if len(cfg.Phases) != 1 || len(cfg.Phases[0].Faults) == 0 {
		t.Fatalf("a control is one phase with a fault for its watch to count in: %+v", cfg.Phases)
	}
	o := b.watchedOptions(w)
	ctx, cancel := context.WithCancel(context.Background())
	out := b.runAsync(ctx, cfg, o)
	stop, sampled := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(sampled)
		poll := time.NewTicker(10 * time.Millisecond)
		defer poll.Stop()
		for {
			select {
			case <-stop:
				return
			case now := <-poll.C:
				w.mu.Lock()
				w.samples = append(w.samples, sample{at: now, entered: w.entered.Load()})
				w.mu.Unlock()
			}
		}
	}()
	ended := false
	t.Cleanup(func() { // a test that failed before end
		if !ended {
			cancel()
			close(stop)
			<-out
		}
	})
	return func() report.Result {
		t.Helper()
		ended = true
		cancel()
		close(stop)
		<-sampled
		got := <-out
		if got.err != nil && !errors.Is(got.err, context.Canceled) || len(got.results) != 1 {
			t.Fatalf("control run: %v, %d results", got.err, len(got.results))
		}
		return b.viaJSON(t, cfg, got.results)[0]
	}
}

// The watch is given to the engine in place of the Set it wraps.
var _ workload.Faults = (*watch)(nil)

// deadline is a phase's time when the test ends it on what it sees: long enough for the
// busiest machine, never reached on a quiet one.
const deadline = time.Minute

// watchedOptions are b's run options with w in front of the phase's faults: the engine
// calls w's Stall and Run, which count the acquires and the fault marks, and w passes them
// on to the real faults.
func (b *bench) watchedOptions(w *watch) workload.Options {
	o := b.options()
	build := o.Faults
	o.Faults = func(ph workload.Phase) (workload.Faults, error) {
		f, err := build(ph)
		w.Faults = f
		return w, err
	}
	return o
}

// besideControl are the rates a recovery is judged by: w's over the window before the
// fault was applied and over the window after it was lifted (windowBefore, windowAfter),
// and the control's (cw, see control) over the same two windows. The test fails at once
// when there is no window after the fault or the control measured nothing in one.
type besideControl struct{ before, after, ctlBefore, ctlAfter float64 }

func (w *watch) besideControl(t *testing.T, cw *watch, applied, lifted mark) besideControl {
	t.Helper()
	bw := w.windowBefore(t, applied)
	aw, ok := w.windowAfter(lifted, span(applied))
	if !ok {
		t.Fatalf("no window of %d acquires after %q", span(applied), lifted.What)
	}
	r := besideControl{before: bw.rate(), after: aw.rate(), ctlBefore: cw.rateOver(bw.from, bw.to), ctlAfter: cw.rateOver(aw.from, aw.to)}
	if r.ctlBefore == 0 || r.ctlAfter == 0 {
		t.Fatalf("the control beside it measured nothing in a window: %.0f, %.0f acquires/s", r.ctlBefore, r.ctlAfter)
	}
	return r
}

// recovered: the rate after, against the control's, is at least recovering of the rate
// before against the control's then.
func (r besideControl) recovered() bool {
	return r.after/r.ctlAfter >= recovering*r.before/r.ctlBefore
}

// runOutcome is what a run that runAsync started ended with.
type runOutcome struct {
	results []report.Result
	err     error
}

// runAsync runs cfg on b with o in a goroutine of its own; its outcome arrives on the
// channel when the run ends.
func (b *bench) runAsync(ctx context.Context, cfg workload.Config, o workload.Options) <-chan runOutcome {
	out := make(chan runOutcome, 1)
	go func() {
		rs, err := workload.Run(ctx, cfg, b.target(), o)
		out <- runOutcome{rs, err}
	}()
	return out
}
