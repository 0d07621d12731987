package strategies_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockbench/lockbench/strategies"
)

// Conformance for the locks that are not mutexes (Info.Capacity): a semaphore admits its
// permits and no more, readers share and exclude writers, a set is taken all or none.

// maxOf raises m to n.
func maxOf(m *atomic.Int32, n int32) {
	for v := m.Load(); n > v && !m.CompareAndSwap(v, n); v = m.Load() {
	}
}

// permitsBound: with 3 permits, three holders hold one key together and a fourth waits
// until one releases; 30 goroutines taking it 5 times each are never more than 3 inside.
func permitsBound(wait string) func(t *testing.T, e *env, prefix string) {
	return func(t *testing.T, e *env, prefix string) {
		w, _ := strategies.ParseWait(wait)
		s := e.strategy(t, func(o *strategies.Options) { o.Wait = w; o.Permits = 3 })
		key := prefix + "sem"
		var held []strategies.Lease
		for i := range 3 {
			held = append(held, acquire(t, s, key, fmt.Sprintf("h%d", i)))
		}
		mustBeBusy(t, s, key, "fourth")
		if n, err := s.(strategies.PermitCounter).Available(context.Background(), key); err != nil || n != 0 {
			t.Fatalf("Available with 3 of 3 held = %d, %v; want 0", n, err)
		}
		got := make(chan error, 1)
		go func() {
			l, err := tryFor(s, key, "fourth", 30*time.Second)
			if err == nil {
				err = l.Release(context.Background())
			}
			got <- err
		}()
		release(t, held[0])
		if err := <-got; err != nil {
			t.Fatalf("the fourth holder, once a permit was released: %v", err)
		}
		release(t, held[1])
		release(t, held[2])

		const workers, rounds = 30, 5
		var inside, maxInside atomic.Int32
		var wg sync.WaitGroup
		errs := make(chan error, workers)
		for i := range workers {
			wg.Go(func() {
				for range rounds {
					l, err := tryFor(s, key, fmt.Sprintf("w%d", i), 60*time.Second)
					if err != nil {
						errs <- err
						return
					}
					maxOf(&maxInside, inside.Add(1))
					time.Sleep(200 * time.Microsecond) // widen the window an overlap needs
					inside.Add(-1)
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
		if m := maxInside.Load(); m > 3 {
			t.Fatalf("%d holders inside a semaphore of 3 permits", m)
		}
		if n, err := s.(strategies.PermitCounter).Available(context.Background(), key); err != nil || n != 3 {
			t.Fatalf("Available after every holder released = %d, %v; want 3", n, err)
		}
	}
}

// sharedReaders: readers hold together; a writer waits for them, and readers wait for it.
func sharedReaders(t *testing.T, e *env, prefix string) {
	s := e.strategy(t, nil)
	sl := s.(strategies.SharedLocker)
	key := prefix + "rw"
	shared := func(owner string) strategies.Lease {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), patience)
		defer cancel()
		l, err := sl.AcquireShared(ctx, key, owner)
		if err != nil {
			t.Fatalf("AcquireShared(%s): %v", owner, err)
		}
		return l
	}
	r1, r2 := shared("r1"), shared("r2")
	mustBeBusy(t, s, key, "w")
	release(t, r1)
	mustBeBusy(t, s, key, "w") // r2 still reads
	release(t, r2)
	w := acquire(t, s, key, "w")
	mustFail(t, s, "a reader beside a writer", func(ctx context.Context) (strategies.Lease, error) {
		return sl.AcquireShared(ctx, key, "r3")
	})
	release(t, w)
	before := s.Stats().FailedAttempts
	release(t, shared("r3"))
	if s.Stats().FailedAttempts != before {
		t.Fatal("a reader waited after the writer released")
	}
}

// setAllOrNone: a set with one key held by another waits and holds none of the others
// meanwhile; once free it holds them all, and its release frees them all.
func setAllOrNone(t *testing.T, e *env, prefix string) {
	s := e.strategy(t, nil)
	sl := s.(strategies.SetLocker)
	a, b, c := prefix+"a", prefix+"b", prefix+"c"
	hb := acquire(t, s, b, "other")
	mustFail(t, s, "a set with a held key", func(ctx context.Context) (strategies.Lease, error) {
		return sl.AcquireSet(ctx, []string{a, b, c}, "set")
	})
	release(t, acquireFree(t, s, a, "x")) // the failed set gave a back
	release(t, hb)
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	l, err := sl.AcquireSet(ctx, []string{a, b, c}, "set")
	if err != nil {
		t.Fatalf("AcquireSet once free: %v", err)
	}
	for _, k := range []string{a, b, c} {
		mustBeBusy(t, s, k, "x")
	}
	release(t, l)
	for _, k := range []string{a, b, c} {
		release(t, acquireFree(t, s, k, "x"))
	}
	if _, err := sl.AcquireSet(context.Background(), nil, "set"); err == nil {
		t.Fatal("AcquireSet of no keys: want an error")
	}
}

// TestSemaphoreLeaksDeadHoldersPermit: RSemaphore's permit has no owner and no ttl, so a
// holder that never releases keeps it for good, while RPermitExpirableSemaphore reclaims it
// once the lease ran out. Both lose a permit to a dead holder at the same moment; when the
// expirable one has it back, the plain one still has not.
func TestSemaphoreLeaksDeadHoldersPermit(t *testing.T) {
	const ttl = 300 * time.Millisecond
	opts := func(o *strategies.Options) { o.TTL = strategies.TTLOf(ttl); o.Permits = 3 }
	plain := newEnv(t, "semaphore").strategy(t, opts)
	xe := newEnv(t, "expirable-semaphore")
	expiring := xe.strategy(t, opts)
	ctx := context.Background()
	key := "sem"
	acquire(t, plain, key, "dead") // never released
	acquire(t, expiring, key, "dead")
	deadline := time.Now().Add(30 * time.Second)
	for {
		n, err := expiring.(strategies.PermitCounter).Available(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if n == 3 {
			break
		}
		if n != 2 || time.Now().After(deadline) {
			t.Fatalf("expirable-semaphore: %d permits free, want 2 until the lease ends, then 3", n)
		}
		time.Sleep(20 * time.Millisecond) // polling for the condition, not a timing window
	}
	if n, err := plain.(strategies.PermitCounter).Available(ctx, key); err != nil || n != 2 {
		t.Fatalf("semaphore after the dead holder's lease would have ended: %d free (%v), want 2: the permit leaked", n, err)
	}
	if pttl, err := xe.client.Do(ctx, xe.client.B().Pttl().Key("{sem}").Build()).AsInt64(); err != nil || pttl != -1 {
		t.Fatalf("the permit count's ttl: %d, %v; want -1 (none, as in Redisson)", pttl, err)
	}
}
