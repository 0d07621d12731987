package strategies_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/redistest"
	"github.com/lockbench/lockbench/strategies"
)

// longLease outlasts the helpers' patience: a waiter of these tests can only get the lock
// through a release message, never by sleeping out the holder's lease.
const longLease = 2 * patience

// TestRedissonNativeOneSubscriptionPerProcess: under --wait native the waiters of
// redisson-lock in two processes share one subscription per process to the lock's channel
// (PUBSUB NUMSUB counts 2 for 4 waiters), and every one of them gets the lock by release
// messages alone.
func TestRedissonNativeOneSubscriptionPerProcess(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "redisson-lock")
	procs := []strategies.Strategy{e.strategy(t, withTTL(longLease)), e.strategy(t, withTTL(longLease))}
	key := redistest.Prefix(t) + "k"
	ch := "redisson_lock__channel:{" + key + "}"
	holder := acquire(t, procs[0], key, "holder")

	var wg sync.WaitGroup
	for i := range 4 {
		s := procs[i%2]
		wg.Go(func() { release(t, acquire(t, s, key, fmt.Sprintf("w%d", i))) })
	}
	pollUntil(t, "two waiters asleep in each process", func() bool {
		a, _ := strategies.RedissonSleepers(procs[0], key)
		b, _ := strategies.RedissonSleepers(procs[1], key)
		return a == 2 && b == 2
	})
	subs, err := e.client.Do(context.Background(), e.client.B().PubsubNumsub().Channel(ch).Build()).AsIntMap()
	if err != nil || subs[ch] != 2 {
		t.Fatalf("PUBSUB NUMSUB %s = %v (%v), want 2: one subscription per process", ch, subs, err)
	}
	release(t, holder)
	wg.Wait()
	for i, s := range procs {
		if st := s.Stats(); st.Subscriptions == 0 || st.Notifications == 0 {
			t.Errorf("process %d: %d subscriptions, %d messages; want its waiters woken by Redisson's channel", i, st.Subscriptions, st.Notifications)
		}
	}
}

// TestRWLockNativeWriteUnlockWakesAll: a write unlock publishes READ_UNLOCK_MESSAGE, which
// wakes every waiter asleep on the lock: the readers waiting for a writer all come in on one
// message, together.
func TestRWLockNativeWriteUnlockWakesAll(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "rw-lock")
	s := e.strategy(t, withTTL(longLease))
	key := redistest.Prefix(t) + "k"
	writer := acquire(t, s, key, "writer")

	const readers = 3
	in := make(chan strategies.Lease, readers)
	for i := range readers {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), patience)
			defer cancel()
			l, err := s.(strategies.SharedLocker).AcquireShared(ctx, key, fmt.Sprintf("r%d", i))
			if err != nil {
				t.Error(err)
			}
			in <- l
		}()
	}
	pollUntil(t, "the readers asleep", func() bool {
		n, subs := strategies.RedissonSleepers(s, key)
		return n == readers && subs == readers
	})
	release(t, writer)
	held := make([]strategies.Lease, 0, readers)
	for range readers {
		l := <-in
		if l == nil {
			t.FailNow()
		}
		held = append(held, l) // all held at once: each came in on the one message
	}
	for _, l := range held {
		release(t, l)
	}
}

// TestSemaphoreNativeRelease: semaphore's waiters are woken by the count a release publishes
// on redisson_sc:{name}; with a long-held permit beside, each release lets one waiter in.
func TestSemaphoreNativeRelease(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"semaphore", "expirable-semaphore"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, name)
			s := e.strategy(t, func(o *strategies.Options) { o.TTL, o.Permits = strategies.TTLOf(longLease), 1 })
			key := redistest.Prefix(t) + "k"
			holder := acquire(t, s, key, "holder")
			done := make(chan struct{})
			var wg sync.WaitGroup
			for i := range 2 {
				wg.Go(func() { release(t, acquire(t, s, key, fmt.Sprintf("w%d", i))) })
			}
			go func() { wg.Wait(); close(done) }()
			pollUntil(t, "the waiters asleep", func() bool { n, _ := strategies.RedissonSleepers(s, key); return n == 2 })
			release(t, holder)
			select {
			case <-done:
			case <-time.After(patience):
				t.Fatal("the waiters did not get the permit in turn on the release messages")
			}
		})
	}
}
