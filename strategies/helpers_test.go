package strategies_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/lockbench/lockbench/internal/redistest"
	"github.com/lockbench/lockbench/strategies"
)

// env is one strategy's Redis: a server (three independent ones for redlock) and clients.
type env struct {
	name   string
	client rueidis.Client   // the first node
	nodes  []rueidis.Client // every node (one for single-node strategies)
}

func newEnv(t *testing.T, name string) *env {
	t.Helper()
	info, ok := strategies.Lookup(name)
	if !ok {
		t.Fatalf("unknown strategy %q", name)
	}
	n := 1
	if info.MultiNode {
		n = 3
	}
	e := &env{name: name}
	for _, s := range redistest.Start(t, n) {
		e.nodes = append(e.nodes, redistest.Client(t, s.Addr))
	}
	e.client = e.nodes[0]
	return e
}

// strategy builds e's strategy with options changed by mod, closed when t ends.
func (e *env) strategy(t *testing.T, mod func(*strategies.Options)) strategies.Strategy {
	t.Helper()
	o := strategies.Options{Client: e.client}
	if info, _ := strategies.Lookup(e.name); info.MultiNode {
		// The default NodeTimeout is ttl/20: 7.5ms at the 150ms ttls of the expiry tests, which
		// a loaded 2-core machine under -race misses, and a release whose every node timed out
		// cannot tell ErrNotOwner. These tests are about the lock, not about slow nodes; the
		// ones that are set their own.
		o = strategies.Options{Nodes: e.nodes, NodeTimeout: 250 * time.Millisecond}
	}
	if mod != nil {
		mod(&o)
	}
	s, err := strategies.New(e.name, o)
	if err != nil {
		t.Fatalf("New(%s): %v", e.name, err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func withTTL(d time.Duration) func(*strategies.Options) {
	return func(o *strategies.Options) { o.TTL = d }
}

// acquire takes key or fails the test.
func acquire(t *testing.T, s strategies.Strategy, key, owner string) strategies.Lease {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	l, err := s.Acquire(ctx, key, owner)
	if err != nil {
		t.Fatalf("%s: Acquire(%s, %s): %v", s.Info().Name, key, owner, err)
	}
	return l
}

// tryFor attempts key for d and returns the lease or the error (ErrNotAcquired when busy).
func tryFor(s strategies.Strategy, key, owner string, d time.Duration) (strategies.Lease, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return s.Acquire(ctx, key, owner)
}

// mustBeBusy asserts that owner cannot take key within d.
func mustBeBusy(t *testing.T, s strategies.Strategy, key, owner string, d time.Duration) {
	t.Helper()
	l, err := tryFor(s, key, owner, d)
	if err == nil {
		_ = l.Release(context.Background())
		t.Fatalf("%s: %s acquired %s, which should be held by someone else", s.Info().Name, owner, key)
	}
	if !errors.Is(err, strategies.ErrNotAcquired) {
		t.Fatalf("%s: want ErrNotAcquired for a held lock, got %v", s.Info().Name, err)
	}
}

func release(t *testing.T, l strategies.Lease) {
	t.Helper()
	if err := l.Release(context.Background()); err != nil {
		t.Fatalf("Release: %v", err)
	}
}

var nextWorker atomic.Int32

// newBenchEnv starts the servers a strategy needs for a benchmark and returns its options.
func newBenchEnv(b *testing.B, name string) strategies.Options {
	b.Helper()
	info, _ := strategies.Lookup(name)
	n := 1
	if info.MultiNode {
		n = 3
	}
	var clients []rueidis.Client
	for _, s := range redistest.Start(b, n) {
		clients = append(clients, redistest.Client(b, s.Addr))
	}
	if info.MultiNode {
		return strategies.Options{Nodes: clients}
	}
	return strategies.Options{Client: clients[0]}
}
