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
	hold   *hold            // the conformance watchdog hold, when the strategy renews
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
		// The default NodeTimeout is ttl/20, at most 500ms: a loaded 2-core machine under
		// -race keeps a loopback reply that long now and then (250ms was seen to fail 50
		// spinning workers), and a node that times out fails a round or a release. These
		// tests are about the lock, not about slow nodes; the ones that are set their own.
		o = strategies.Options{Nodes: e.nodes, Params: strategies.Params{NodeTimeout: 10 * time.Second}}
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
	return func(o *strategies.Options) { o.TTL = strategies.TTLOf(d) }
}

// patience bounds every wait of these tests for something that must happen: generous, so
// that a busy machine passes, and only ever spent by a test that fails.
const patience = 30 * time.Second

// acquire takes key or fails the test.
func acquire(t *testing.T, s strategies.Strategy, key, owner string) strategies.Lease {
	t.Helper()
	l, err := tryFor(s, key, owner, patience)
	if err != nil {
		t.Fatalf("%s: Acquire(%s, %s): %v", s.Info().Name, key, owner, err)
	}
	return l
}

// acquireFree takes key, which must be free: at the first attempt, without waiting for a
// lease to run out (which patience would allow).
func acquireFree(t *testing.T, s strategies.Strategy, key, owner string) strategies.Lease {
	t.Helper()
	before := s.Stats().FailedAttempts
	l := acquire(t, s, key, owner)
	if n := s.Stats().FailedAttempts - before; n != 0 {
		t.Fatalf("%s: %s was still taken: %d failed attempts before %s got it", s.Info().Name, key, n, owner)
	}
	return l
}

// tryFor attempts key for d and returns the lease or the error (ErrNotAcquired when busy).
func tryFor(s strategies.Strategy, key, owner string, d time.Duration) (strategies.Lease, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return s.Acquire(ctx, key, owner)
}

// mustBeBusy asserts that owner cannot take key: its acquire must find the lock taken
// (Stats.FailedAttempts grows), and is cancelled then. No time window: on a stalled machine
// the attempt comes later, never not at all.
func mustBeBusy(t *testing.T, s strategies.Strategy, key, owner string) {
	t.Helper()
	mustFail(t, s, owner+" on "+key, func(ctx context.Context) (strategies.Lease, error) {
		return s.Acquire(ctx, key, owner)
	})
}

// mustFail runs acquire until s counts one more failed attempt, then cancels it, and
// asserts that it returned ErrNotAcquired rather than a lease.
func mustFail(t *testing.T, s strategies.Strategy, what string, acquire func(context.Context) (strategies.Lease, error)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	before := s.Stats().FailedAttempts
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for s.Stats().FailedAttempts == before {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
		cancel()
	}()
	l, err := acquire(ctx)
	if err == nil {
		_ = l.Release(context.Background())
		t.Fatalf("%s: %s acquired, which should be held by someone else", s.Info().Name, what)
	}
	if !errors.Is(err, strategies.ErrNotAcquired) {
		t.Fatalf("%s: %s: want ErrNotAcquired for a held lock, got %v", s.Info().Name, what, err)
	}
}

func release(t *testing.T, l strategies.Lease) {
	t.Helper()
	if err := l.Release(context.Background()); err != nil {
		t.Fatalf("Release: %v", err)
	}
}

// waitFor polls cond until it holds, failing the test after patience.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	pollUntil(t, "a condition", cond)
}

// pollUntil polls cond until it holds, failing the test after patience.
func pollUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(patience)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", patience, what)
		}
		time.Sleep(2 * time.Millisecond) // polling for the condition, not a timing window
	}
}

// waitGone waits until key no longer exists on c: a lease that ran out.
func waitGone(t *testing.T, c rueidis.Client, key string) {
	t.Helper()
	pollUntil(t, key+" to expire", func() bool {
		n, err := c.Do(context.Background(), c.B().Exists().Key(key).Build()).AsInt64()
		if err != nil {
			t.Fatal(err)
		}
		return n == 0
	})
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
