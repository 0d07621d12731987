package workload

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lockbench/lockbench/strategies"
)

// Router is the Backend of a run whose strategies do not all run on one lock service
// (`--strategy etcd-mutex,token`): each phase's strategy runs on the Backend its
// Info.Service names, and the barrier and the reference clock of a multi-process run are
// Default's, the one every process reaches (Redis when the run has it).
type Router struct {
	// Default serves the Redis strategies (Info.Service ""), the barrier and the clock.
	// It may be nil in a run without Redis strategies and without a barrier.
	Default Backend
	// By holds the other services by the name strategies give in Info.Service.
	By map[string]Backend
}

var _ Backend = Router{}

// For is the Backend the strategy described by info runs on: By[info.Service], or Default
// for a Redis strategy. A service the run did not connect to is an error that names it.
func (s Router) For(info strategies.Info) (Backend, error) {
	b := s.Default
	if info.Service != "" {
		b = s.By[info.Service]
	}
	if b == nil {
		service := info.Service
		if service == "" {
			service = "Redis"
		}
		have := slices.Sorted(func(yield func(string) bool) {
			for name := range s.By {
				if !yield(name) {
					return
				}
			}
		})
		return nil, fmt.Errorf("strategy %s runs on %s, which this run has not connected to (it has: %s)", info.Name, service, strings.Join(have, ", "))
	}
	return b, nil
}

// Name is Default's name: the barrier's and the clock's service.
func (s Router) Name() string { return s.def().Name() }

// Configure is Default's; the engine configures a phase through For.
func (s Router) Configure(o *strategies.Options) { s.def().Configure(o) }

// Scope routes by info.Service; the engine calls it through For.
func (s Router) Scope(info strategies.Info, prefix string) Scope {
	b, err := s.For(info)
	if err != nil {
		return s.def().Scope(info, prefix)
	}
	return b.Scope(info, prefix)
}

var (
	_ BarrierStore = Router{}
	_ Clock        = Router{}
)

// Arrive is Default's; ErrNoBarrier when it keeps no barrier.
func (s Router) Arrive(ctx context.Context, key string, ttl time.Duration) (int64, error) {
	b, ok := s.def().(BarrierStore)
	if !ok {
		return 0, ErrNoBarrier
	}
	return b.Arrive(ctx, key, ttl)
}

// Arrived is Default's; ErrNoBarrier when it keeps no barrier.
func (s Router) Arrived(ctx context.Context, key string) (int64, error) {
	b, ok := s.def().(BarrierStore)
	if !ok {
		return 0, ErrNoBarrier
	}
	return b.Arrived(ctx, key)
}

// ClockSamples is Default's; ErrNoBarrier when it has no clock.
func (s Router) ClockSamples(ctx context.Context, n int) ([]ClockSample, error) {
	return clockOf(ctx, s.def(), n)
}

// def is Default, or when it is nil the first of By in name order: a run on one other
// service still has a barrier store and a clock.
func (s Router) def() Backend {
	if s.Default != nil {
		return s.Default
	}
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for n := range s.By {
			if !yield(n) {
				return
			}
		}
	}) {
		return s.By[name]
	}
	return nil
}

// backendFor is the Backend the phase's strategy runs on: b itself unless b routes by
// service.
func backendFor(b Backend, info strategies.Info) (Backend, error) {
	if s, ok := b.(Router); ok {
		return s.For(info)
	}
	return b, nil
}
