package faults

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/strategies"
)

// Set is the faults of one phase. It implements workload.Faults: client-side faults act
// through strategy hooks, worker contexts and the stalls inside the critical section; node
// faults run on their schedule in Run.
type Set struct {
	specs   []Spec
	workers int
	nodes   *Nodes // what node faults act on; nil when the phase has none

	paused sync.Map // owner -> *pause: process-pause freezes that owner's renewals

	// fired counts, per spec, the random client-side events (a stall, a freeze, a crash),
	// reported when the phase ends
	fired []atomic.Uint64
}

type pause struct{ done chan struct{} }

// New prepares the faults of a phase run by workers workers. Node faults need nodes (see
// Nodes); a node fault the target cannot serve is a *SpecError.
func New(specs []Spec, workers int, nodes *Nodes) (*Set, error) {
	s := &Set{specs: specs, workers: workers, nodes: nodes, fired: make([]atomic.Uint64, len(specs))}
	for _, sp := range specs {
		if sp.NeedsNodes() {
			if err := nodes.check(sp); err != nil {
				return nil, err
			}
		}
	}
	return s, nil
}

// errCrash is what a simulated client death looks like to the strategy.
var errCrash = errors.New("client killed between SETNX and EXPIRE")

// Hooks returns the strategy hooks the phase's faults need; a hook no fault needs stays nil.
func (s *Set) Hooks() strategies.Hooks {
	var h strategies.Hooks
	var crashes, releases []int // indexes of the specs acting through a hook
	for i, sp := range s.specs {
		switch sp.Kind {
		case CrashBetween:
			crashes = append(crashes, i)
		case ReleasePause:
			releases = append(releases, i)
		case ProcessPause:
			h.BeforeRenew = s.awaitOwner
		}
	}
	if len(crashes) > 0 {
		h.AfterSetNX = func(context.Context, string, string) error {
			for _, i := range crashes {
				if s.fire(i) {
					return errCrash
				}
			}
			return nil
		}
	}
	if len(releases) > 0 {
		h.ReleasePause = func(ctx context.Context, _, _ string) {
			for _, i := range releases {
				if s.fire(i) {
					sleep(ctx, s.specs[i].D)
				}
			}
		}
	}
	return h
}

// fire draws whether spec i's random fault strikes this time, and counts it when it does.
func (s *Set) fire(i int) bool {
	if rand.Float64() < s.specs[i].P {
		s.fired[i].Add(1)
		return true
	}
	return false
}

// WorkerContext gives the first fraction of the workers a clock shifted by the offset.
func (s *Set) WorkerContext(ctx context.Context, worker int) context.Context {
	for _, sp := range s.specs {
		if sp.Kind == ClockSkew && worker < s.skewed(sp) {
			offset := sp.Offset
			ctx = strategies.WithClock(ctx, func() time.Time { return time.Now().Add(offset) })
		}
	}
	return ctx
}

func (s *Set) skewed(sp Spec) int { return int(sp.Fraction*float64(s.workers) + 0.5) }

// Stall pauses a holder inside its critical section, after its hold. A holder-pause stalls
// only the holder's goroutine — its watchdog keeps renewing. A process-pause at point=hold
// freezes the holder's renewals too, as a stop-the-world pause freezes a whole client.
func (s *Set) Stall(ctx context.Context, _ int, owner string) {
	for i, sp := range s.specs {
		switch {
		case sp.Kind == HolderPause:
			if s.fire(i) {
				sleep(ctx, sp.D)
			}
		case sp.Kind == ProcessPause && sp.Point != PointWrite:
			if s.fire(i) {
				s.freeze(ctx, owner, sp.D)
			}
		}
	}
}

// StallWrite freezes a holder, renewals included, between its lease check and its last
// write, for a process-pause at point=write: the holder has just seen its lease alive and
// writes after the pause whatever became of it.
func (s *Set) StallWrite(ctx context.Context, _ int, owner string) {
	for i, sp := range s.specs {
		if sp.Kind == ProcessPause && sp.Point == PointWrite && s.fire(i) {
			s.freeze(ctx, owner, sp.D)
		}
	}
}

// freeze stops owner for d (or until ctx ends) together with its renewals, which wait in
// awaitOwner until the pause is over.
func (s *Set) freeze(ctx context.Context, owner string, d time.Duration) {
	p := &pause{done: make(chan struct{})}
	s.paused.Store(owner, p)
	sleep(ctx, d)
	s.paused.Delete(owner)
	close(p.done)
}

// awaitOwner blocks a renewal while its owner is frozen by a process-pause.
func (s *Set) awaitOwner(ctx context.Context, _, owner string) {
	if v, ok := s.paused.Load(owner); ok {
		select {
		case <-v.(*pause).done:
		case <-ctx.Done():
		}
	}
}

// Run plays the node faults on their schedule and, when ctx ends, undoes them and reports
// what the client-side faults did.
func (s *Set) Run(ctx context.Context, windowStart time.Time, emit func(report.Event)) {
	for _, sp := range s.specs {
		if sp.Kind == ClockSkew {
			emit(report.Event{TS: 0, Fault: sp.Raw, What: fmt.Sprintf("%d of %d workers read a clock %s off", s.skewed(sp), s.workers, sp.Offset)})
		}
	}
	var wg sync.WaitGroup
	for _, sp := range s.specs {
		if sp.NeedsNodes() {
			wg.Go(func() { s.nodes.play(ctx, sp, windowStart, emit) })
		}
	}
	<-ctx.Done()
	wg.Wait()
	ts := time.Since(windowStart).Seconds()
	for i, sp := range s.specs {
		var what string
		n := s.fired[i].Load()
		switch sp.Kind {
		case HolderPause:
			what = fmt.Sprintf("%d holders stalled %s inside the critical section", n, sp.D)
		case ProcessPause:
			what = fmt.Sprintf("%d holders frozen %s with their renewals", n, sp.D)
			if sp.Point == PointWrite {
				what += " between their lease check and their last write"
			}
		case ReleasePause:
			what = fmt.Sprintf("%d releases stalled %s before their delete (get-del: between GET and DEL)", n, sp.D)
		case CrashBetween:
			what = fmt.Sprintf("%d clients killed between SETNX and EXPIRE", n)
		default:
			continue
		}
		emit(report.Event{TS: ts, Fault: sp.Raw, What: what})
	}
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
