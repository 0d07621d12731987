package faults

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lockbench/lockbench/internal/clock"
	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/strategies"
)

// Set is the faults of one phase. It implements workload.Faults: client-side faults act
// through strategy hooks, worker contexts and the stalls inside the critical section; node
// faults run on their schedule in Run. Each spec's kind says what it does in each (see kind).
type Set struct {
	faults  []*fault
	workers int
	nodes   *Nodes // what node faults act on; nil when the phase has none

	paused sync.Map      // owner -> *pause: a holder frozen together with its renewals (freeze)
	dead   sync.Map      // owner -> struct{}: a holder that died holding its lock (holder-crash)
	over   chan struct{} // closed when Run returns: the phase's faults are over

	freezeMu sync.Mutex
	freezers []func() (thaw func()) // client processes frozen with a holder (Hooks.OnPause)
}

// fault is one spec at work in a phase: what its kind's funcs are given.
type fault struct {
	Spec
	kind  *kind
	set   *Set
	fired atomic.Uint64 // how often the random fault struck
	// firstAt is when the first strike not yet reported happened (ns after epoch, plus 1),
	// 0 when none.
	firstAt atomic.Int64
	// reported is how many strikes Run has reported; batches how many events it emitted.
	reported, batches uint64
}

type pause struct{ done chan struct{} }

// New prepares the faults of a phase run by workers workers. Node faults need nodes (see
// Nodes); a node fault the target cannot serve is a *SpecError.
func New(specs []Spec, workers int, nodes *Nodes) (*Set, error) {
	s := &Set{workers: workers, nodes: nodes, over: make(chan struct{})}
	for _, sp := range specs {
		k := lookup(sp.Kind)
		if k == nil {
			return nil, &SpecError{Value: sp.Raw, Reason: fmt.Sprintf("unknown fault %q", sp.Kind)}
		}
		if k.play != nil {
			if err := nodes.check(sp, k); err != nil {
				return nil, err
			}
		}
		s.faults = append(s.faults, &fault{Spec: sp, kind: k, set: s})
	}
	return s, nil
}

// fire draws whether the random fault strikes this time, and counts it when it does.
func (f *fault) fire() bool {
	if rand.Float64() < f.P {
		f.firstAt.CompareAndSwap(0, int64(time.Since(epoch))+1)
		f.fired.Add(1)
		return true
	}
	return false
}

// Hooks returns the strategy hooks the phase's faults need; a hook no fault needs stays nil.
// Where several faults set the same hook, theirs run in the order of the specs, and the
// first AfterSetNX error ends the chain: that client is dead.
func (s *Set) Hooks() strategies.Hooks {
	var h strategies.Hooks
	for _, f := range s.faults {
		if f.kind.hooks != nil {
			h = chain(h, f.kind.hooks(f))
		}
	}
	return h
}

// chain returns hooks that run a's, then b's.
func chain(a, b strategies.Hooks) strategies.Hooks {
	h := strategies.Hooks{
		AfterSetNX:   untilError(a.AfterSetNX, b.AfterSetNX),
		BeforeRenew:  inTurn(a.BeforeRenew, b.BeforeRenew),
		ReleasePause: inTurn(a.ReleasePause, b.ReleasePause),
		OnPause:      a.OnPause, // every one registers with the same Set
	}
	if h.OnPause == nil {
		h.OnPause = b.OnPause
	}
	return h
}

// inTurn runs first, then then; either may be nil.
func inTurn(first, then func(ctx context.Context, key, owner string)) func(ctx context.Context, key, owner string) {
	if first == nil {
		return then
	}
	if then == nil {
		return first
	}
	return func(ctx context.Context, key, owner string) {
		first(ctx, key, owner)
		then(ctx, key, owner)
	}
}

// untilError runs first, then then unless first failed; either may be nil.
func untilError(first, then func(ctx context.Context, key, owner string) error) func(ctx context.Context, key, owner string) error {
	if first == nil {
		return then
	}
	if then == nil {
		return first
	}
	return func(ctx context.Context, key, owner string) error {
		if err := first(ctx, key, owner); err != nil {
			return err
		}
		return then(ctx, key, owner)
	}
}

// WorkerContext is the context worker runs under, as the faults make it (a skewed clock).
func (s *Set) WorkerContext(ctx context.Context, worker int) context.Context {
	for _, f := range s.faults {
		if f.kind.worker != nil {
			ctx = f.kind.worker(ctx, f, worker)
		}
	}
	return ctx
}

// Stall pauses a holder inside its critical section, after its hold, as long as the faults
// placed there stall it.
func (s *Set) Stall(ctx context.Context, _ int, owner string) {
	for _, f := range s.faults {
		if f.kind.stall != nil {
			f.kind.stall(ctx, f, owner)
		}
	}
}

// StallWrite pauses a holder between its lease check and its last write, as long as the
// faults placed there stall it: the holder has just seen its lease alive and writes after
// the pause whatever became of it.
func (s *Set) StallWrite(ctx context.Context, _ int, owner string) {
	for _, f := range s.faults {
		if f.kind.stallWrite != nil {
			f.kind.stallWrite(ctx, f, owner)
		}
	}
}

// Crash reports whether owner dies in its critical section, after the stalls: it never
// releases, and its renewals stop (see holder-crash). The first fault that kills it decides.
func (s *Set) Crash(_ int, owner string) bool {
	for _, f := range s.faults {
		if f.kind.crash != nil && f.kind.crash(f, owner) {
			return true
		}
	}
	return false
}

// freeze stops owner for d (or until ctx ends) together with its renewals, which wait in
// awaitOwner until the pause is over: a stop-the-world pause of a whole client. A fault
// that freezes sets awaitOwner as its BeforeRenew hook.
func (s *Set) freeze(ctx context.Context, owner string, d time.Duration) {
	s.freezeMu.Lock()
	freezers := s.freezers
	s.freezeMu.Unlock()
	for _, freeze := range freezers {
		defer freeze()() // a driver's process stops with its holder
	}
	p := &pause{done: make(chan struct{})}
	s.paused.Store(owner, p)
	clock.Sleep(ctx, d)
	s.paused.Delete(owner)
	close(p.done)
}

// onPause is Hooks.OnPause: freeze stops a strategy's client process during every freeze.
func (s *Set) onPause(freeze func() (thaw func())) {
	s.freezeMu.Lock()
	s.freezers = append(s.freezers, freeze)
	s.freezeMu.Unlock()
}

// awaitOwner blocks a renewal while its owner is frozen.
func (s *Set) awaitOwner(ctx context.Context, _, owner string) {
	if v, ok := s.paused.Load(owner); ok {
		select {
		case <-v.(*pause).done:
		case <-ctx.Done():
		}
	}
}

// Run plays the node faults on their schedule and, when ctx ends, undoes them. It reports
// what the random client-side faults did as it happens: every second (every 10 seconds
// after 30 reports, so that a long window stays readable), one event per fault that
// struck since the last, stamped when the first of those strikes happened and counting
// them ("(N in all)" when earlier events counted some). At ctx's end it reports the last
// batch, or "0 ..." for a fault that never struck.
func (s *Set) Run(ctx context.Context, windowStart time.Time, emit func(report.Event)) {
	for _, f := range s.faults {
		if line := f.kind.begin; line != nil {
			if what := line(f); what != "" {
				emit(report.Event{TS: 0, Fault: f.Raw, What: what})
			}
		}
	}
	var wg sync.WaitGroup
	for _, f := range s.faults {
		if play := f.kind.play; play != nil {
			wg.Go(func() { play(ctx, &scene{Spec: f.Spec, nodes: s.nodes, windowStart: windowStart, emit: emit}) })
		}
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for ticks := 1; ; ticks++ {
		select {
		case <-ctx.Done():
		case <-tick.C:
			for _, f := range s.faults {
				if f.batches < 30 || ticks%10 == 0 {
					f.report(windowStart, false, emit)
				}
			}
			continue
		}
		break
	}
	wg.Wait()
	close(s.over)
	for _, f := range s.faults {
		f.report(windowStart, true, emit)
	}
}

// epoch is the monotonic origin of fault.firstAt.
var epoch = time.Now()

// report emits the strikes of a random fault since its last report, stamped at the first
// of them; last, at the phase's end, also reports a fault that never struck.
func (f *fault) report(windowStart time.Time, last bool, emit func(report.Event)) {
	if f.kind.end == nil {
		return
	}
	all := f.fired.Load()
	n := all - f.reported
	at := f.firstAt.Swap(0)
	if n == 0 && !(last && all == 0) {
		return
	}
	ts := time.Since(windowStart).Seconds()
	if at != 0 {
		ts = max(0, epoch.Add(time.Duration(at-1)).Sub(windowStart).Seconds())
	}
	what := f.kind.end(f, n)
	if what == "" {
		return
	}
	if all != n {
		what += fmt.Sprintf(" (%d in all)", all)
	}
	f.reported, f.batches = all, f.batches+1
	emit(report.Event{TS: ts, Fault: f.Raw, What: what})
}
