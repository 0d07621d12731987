package strategies_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/redistest"
	"github.com/lockbench/lockbench/strategies"
)

// TestMultiLockOverlappingSets: 20 workers in two processes take sets of 3 of 10 keys drawn
// at random, so that sets overlap. No key ever has two holders, every acquire completes
// (no deadlock), and a release frees every key of its set. Each set lists its keys in the
// keys' order, as a careful multi-resource update does: RedissonMultiLock takes them in the
// order given, and sets that list shared keys in opposite orders stall each other a round
// at a time (TestMultiLockOppositeOrders).
func TestMultiLockOverlappingSets(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "multilock")
	pubsub := func(o *strategies.Options) { o.Wait = strategies.Wait{Kind: strategies.WaitPubSub} }
	procs := []strategies.Strategy{e.strategy(t, pubsub), e.strategy(t, pubsub)}
	prefix := redistest.Prefix(t)
	const workers, rounds, nkeys, setSize = 20, 5, 10, 3
	keys := make([]string, nkeys)
	for i := range keys {
		keys[i] = fmt.Sprintf("%sk%d", prefix, i)
	}
	var holders [nkeys]atomic.Int32
	var overlaps atomic.Int32
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for i := range workers {
		s := procs[i%2].(strategies.SetLocker)
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(i), 2))
			owner := fmt.Sprintf("w%d", i)
			for range rounds {
				idx := rng.Perm(nkeys)[:setSize]
				slices.Sort(idx)
				set := make([]string, setSize)
				for j, k := range idx {
					set[j] = keys[k]
				}
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				l, err := s.AcquireSet(ctx, set, owner)
				cancel()
				if err != nil {
					errs <- fmt.Errorf("AcquireSet(%v): %w", set, err)
					return
				}
				for _, k := range idx {
					if holders[k].Add(1) != 1 {
						overlaps.Add(1)
					}
				}
				time.Sleep(200 * time.Microsecond) // widen the window an overlap needs
				for _, k := range idx {
					holders[k].Add(-1)
				}
				if err := l.Release(context.Background()); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("worker: %v", err)
	}
	if n := overlaps.Load(); n != 0 {
		t.Fatalf("%d entries found a key of their set held by another", n)
	}
	for _, k := range keys {
		release(t, acquireFree(t, procs[0], k, "after"))
	}
	t.Logf("failed attempts (members and rounds): %d", procs[0].Stats().FailedAttempts+procs[1].Stats().FailedAttempts)
}

// TestMultiLockLeaseWhileAcquiring: with a lease (--ttl), RedissonMultiLock takes each key
// with a lease of twice the round while the set is incomplete, so that a key taken early
// outlives a long wait for the next, then sets every key's lease to the ttl once it holds
// them all (checkLeaseTime).
func TestMultiLockLeaseWhileAcquiring(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "multilock")
	const ttl = 4 * time.Second // above the round of 2 keys (3s): rounds of 3..4s, keys at 6..8s
	s := e.strategy(t, withTTL(ttl))
	prefix := redistest.Prefix(t)
	k1, k2 := prefix+"k1", prefix+"k2"
	other := acquire(t, s, k2, "other")

	got := make(chan strategies.Lease, 1)
	go func() {
		l, err := s.(strategies.SetLocker).AcquireSet(context.Background(), []string{k1, k2}, "set")
		if err != nil {
			t.Error(err)
		}
		got <- l
	}()
	pollUntil(t, "the set's first key taken", func() bool {
		n, _ := e.client.Do(context.Background(), e.client.B().Exists().Key("{"+k1+"}").Build()).AsInt64()
		return n == 1
	})
	if left := pttl(t, e.client, "{"+k1+"}"); left <= ttl {
		t.Errorf("while the set waits for its second key, the first's lease is %s, want twice the round (above the ttl %s)", left, ttl)
	}
	release(t, other)
	l := <-got
	if l == nil {
		t.FailNow()
	}
	for _, k := range []string{k1, k2} {
		if left := pttl(t, e.client, "{"+k+"}"); left > ttl {
			t.Errorf("once the set is held, %s's lease is %s, want the ttl %s", k, left, ttl)
		}
	}
	release(t, l)
}
