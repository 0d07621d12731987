package workload

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/redistest"
	"github.com/lockbench/lockbench/strategies"
)

// counted is a Backend that passes every call on to a real Redis backend and counts it, so
// that a test can see what the engine asks of a lock service, and how often.
type counted struct {
	Redis                                 Backend
	name                                  string
	configure, scopes, arrive, arrived    atomic.Int64
	clock, startCost, stopCost, stuck, cl atomic.Int64
	costErr                               error // stop returns it instead of the cost
}

func (b *counted) Name() string { return b.name }
func (b *counted) Configure(o *strategies.Options) {
	b.configure.Add(1)
	b.Redis.Configure(o)
}
func (b *counted) Scope(info strategies.Info, prefix string) Scope {
	b.scopes.Add(1)
	return countedScope{b, b.Redis.Scope(info, prefix)}
}
func (b *counted) Arrive(ctx context.Context, key string, ttl time.Duration) (int64, error) {
	b.arrive.Add(1)
	return b.Redis.(BarrierStore).Arrive(ctx, key, ttl)
}
func (b *counted) Arrived(ctx context.Context, key string) (int64, error) {
	b.arrived.Add(1)
	return b.Redis.(BarrierStore).Arrived(ctx, key)
}
func (b *counted) ClockSamples(ctx context.Context, n int) ([]ClockSample, error) {
	b.clock.Add(1)
	return b.Redis.(Clock).ClockSamples(ctx, n)
}

type countedScope struct {
	b *counted
	Scope
}

func (s countedScope) StartCost(ctx context.Context) (func(context.Context) (Cost, error), error) {
	s.b.startCost.Add(1)
	stop, err := s.Scope.StartCost(ctx)
	return func(ctx context.Context) (Cost, error) {
		s.b.stopCost.Add(1)
		c, err := stop(ctx)
		if s.b.costErr != nil {
			return Cost{}, s.b.costErr
		}
		return c, err
	}, err
}
func (s countedScope) StuckLocks(ctx context.Context, isLock func(string) bool) (uint64, error) {
	s.b.stuck.Add(1)
	return s.Scope.StuckLocks(ctx, isLock)
}
func (s countedScope) Cleanup(ctx context.Context) error {
	s.b.cl.Add(1)
	return s.Scope.(Cleaner).Cleanup(ctx)
}

// The engine reaches the lock service only through Backend, and only per phase: however
// many acquisitions a phase makes, the calls stay a handful.
func TestBackendIsUsedPerPhase(t *testing.T) {
	t.Parallel()
	_, c := redistest.Server(t)
	cfg := shortConfig("token", "fenced")
	cfg.Workers, cfg.Duration = 5, 300*time.Millisecond
	cfg.Barrier = &Barrier{Name: "seam", Node: 1, Nodes: 1, Timeout: 10 * time.Second}
	b := &counted{Redis: redisBackend(c), name: "Redis"}
	results, err := Run(context.Background(), cfg, b, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var acquired uint64
	for _, r := range results {
		acquired += r.Acquired
		if !r.Redis.Measured || r.Redis.CommandsPerAcquire < 2 || r.History == nil {
			t.Errorf("%s: cost %+v, history %v: the backend's readings did not reach the result", r.Strategy, r.Redis, r.History != nil)
		}
	}
	const phases = 2
	for _, x := range []struct {
		what      string
		got, want int64
	}{
		{"Configure (validation, then the phase)", b.configure.Load(), 2 * phases},
		{"Scope", b.scopes.Load(), phases},
		{"Arrive (start, end)", b.arrive.Load(), 2 * phases},
		{"Arrived (one process: never waits)", b.arrived.Load(), 0},
		{"ClockSamples (start, end)", b.clock.Load(), 2 * phases},
		{"StartCost", b.startCost.Load(), phases},
		{"stop", b.stopCost.Load(), phases},
		{"StuckLocks", b.stuck.Load(), phases},
		{"Cleanup", b.cl.Load(), phases},
	} {
		if x.got != x.want {
			t.Errorf("%s called %d times in %d phases (%d acquisitions), want %d", x.what, x.got, phases, acquired, x.want)
		}
	}
	if n, _ := c.Do(context.Background(), c.B().Keys().Pattern("lockbench:seam:[0-9]*").Build()).AsStrSlice(); len(n) != 0 {
		t.Errorf("keys left behind: %v", n)
	}
}

// A cost the service cannot give is a note naming the service, never zeros that would read
// as "free".
func TestBackendCostErrorIsANote(t *testing.T) {
	t.Parallel()
	_, c := redistest.Server(t)
	cfg := shortConfig("token")
	cfg.Workers, cfg.Duration = 2, 200*time.Millisecond
	b := &counted{Redis: redisBackend(c), name: "etcd", costErr: errors.New("a member was replaced\nsecond line")}
	results, err := Run(context.Background(), cfg, b, Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := results[0]
	want := "etcd cost not measured: a member was replaced"
	if r.Redis.Measured || len(r.Notes) != 1 || r.Notes[0] != want {
		t.Errorf("cost %+v, notes %q; want not measured and the note %q", r.Redis, r.Notes, want)
	}
}

// bare is a lock service with only what every service must have: Name, Configure and
// Scope, and a Scope without Cleanup. It wraps a real Redis backend, hiding the rest.
type bare struct{ redis Backend }

func (b bare) Name() string                    { return "Bare" }
func (b bare) Configure(o *strategies.Options) { b.redis.Configure(o) }
func (b bare) Scope(info strategies.Info, prefix string) Scope {
	s := b.redis.Scope(info, prefix)
	return struct {
		scopeCost
	}{s}
}

// scopeCost is the required part of a Scope.
type scopeCost interface {
	StartCost(ctx context.Context) (func(context.Context) (Cost, error), error)
	StuckLocks(ctx context.Context, isLock func(string) bool) (uint64, error)
}

// A service with only the required interface runs a phase; a multi-process run on it
// (nothing routes its barrier to Redis) stops at the barrier with ErrNoBarrier, before
// any worker starts, and its history's clock says the same.
func TestBackendOptionalParts(t *testing.T) {
	t.Parallel()
	_, c := redistest.Server(t)
	cfg := shortConfig("token")
	cfg.Workers, cfg.Duration = 2, 200*time.Millisecond
	b := bare{redisBackend(c)}
	if _, ok := Scope(b.Scope(strategies.Info{}, "x")).(Cleaner); ok {
		t.Fatal("the bare scope is a Cleaner: the test would not see a Scope without one")
	}
	results, err := Run(context.Background(), cfg, b, Options{})
	if err != nil || len(results) != 1 || results[0].Acquired == 0 {
		t.Fatalf("a phase on the required interface alone: %v, %+v", err, results)
	}
	cfg.Barrier = &Barrier{Name: "bare", Node: 1, Nodes: 1, Timeout: 10 * time.Second}
	results, err = Run(context.Background(), cfg, b, Options{})
	if !errors.Is(err, ErrNoBarrier) {
		t.Fatalf("a barrier on a service without BarrierStore: %v; want ErrNoBarrier", err)
	}
	if len(results) == 1 && results[0].Acquired != 0 {
		t.Errorf("workers ran before the barrier failed: %d acquired", results[0].Acquired)
	}
	if _, err := clockOf(context.Background(), b, 1); !errors.Is(err, ErrNoBarrier) {
		t.Errorf("the clock of a service without Clock: %v; want ErrNoBarrier", err)
	}
	if _, err := (Router{By: map[string]Backend{"bare": b}}).Arrive(context.Background(), "k", time.Second); !errors.Is(err, ErrNoBarrier) {
		t.Errorf("a Router whose only service keeps no barrier: Arrive %v; want ErrNoBarrier", err)
	}
}
