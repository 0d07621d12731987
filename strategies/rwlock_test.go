package strategies_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/redistest"
	"github.com/lockbench/lockbench/strategies"
)

// TestRWLockReadersShareWritersExclude: 20 workers in two processes, 80% reads, never see a
// reader beside a writer nor two writers, and every acquire completes.
func TestRWLockReadersShareWritersExclude(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "rw-lock")
	for _, wait := range []string{"backoff:1ms..20ms", "pubsub"} {
		t.Run(wait, func(t *testing.T) {
			w, _ := strategies.ParseWait(wait)
			procs := []strategies.Strategy{
				e.strategy(t, func(o *strategies.Options) { o.Wait = w }),
				e.strategy(t, func(o *strategies.Options) { o.Wait = w }),
			}
			key := redistest.Prefix(t) + "rw"
			const workers, rounds = 20, 20
			var readers, writers, maxReaders, bad atomic.Int32
			var wg sync.WaitGroup
			errs := make(chan error, workers)
			for i := range workers {
				s := procs[i%2]
				wg.Go(func() {
					rng := rand.New(rand.NewPCG(uint64(i), 1))
					owner := fmt.Sprintf("w%d", i)
					for range rounds {
						ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
						read := rng.Float64() < 0.8
						var l strategies.Lease
						var err error
						if read {
							l, err = s.(strategies.SharedLocker).AcquireShared(ctx, key, owner)
						} else {
							l, err = s.Acquire(ctx, key, owner)
						}
						cancel()
						if err != nil {
							errs <- err
							return
						}
						if read {
							maxOf(&maxReaders, readers.Add(1))
							if writers.Load() != 0 {
								bad.Add(1)
							}
						} else if writers.Add(1) != 1 || readers.Load() != 0 {
							bad.Add(1)
						}
						time.Sleep(200 * time.Microsecond) // widen the window an overlap needs
						if read {
							readers.Add(-1)
						} else {
							writers.Add(-1)
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
			if n := bad.Load(); n != 0 {
				t.Fatalf("%d entries found a writer beside another holder", n)
			}
			t.Logf("at most %d readers at once", maxReaders.Load())
		})
	}
}

// TestRWLockReentry: Redisson's reentrancy. The writer re-enters and may also read; its lock
// stays exclusive until its last hold goes. A reader re-enters; a reader may not write.
func TestRWLockReentry(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "rw-lock")
	s := e.strategy(t, nil)
	sl := s.(strategies.SharedLocker)
	key := redistest.Prefix(t) + "rw"
	shared := func(owner string) strategies.Lease {
		t.Helper()
		l, err := sl.AcquireShared(context.Background(), key, owner)
		if err != nil {
			t.Fatalf("AcquireShared(%s): %v", owner, err)
		}
		return l
	}
	mustNotRead := func(owner string) {
		t.Helper()
		mustFail(t, s, owner+" reading beside a writer", func(ctx context.Context) (strategies.Lease, error) {
			return sl.AcquireShared(ctx, key, owner)
		})
	}

	outer := acquire(t, s, key, "a")
	inner := acquire(t, s, key, "a")
	r := shared("a") // the writer reads
	mustNotRead("b")
	release(t, r)
	release(t, inner)
	mustNotRead("b")
	mustBeBusy(t, s, key, "b")
	release(t, outer)

	r1, r2 := shared("a"), shared("a")
	mustBeBusy(t, s, key, "a") // a reader may not write
	release(t, r1)
	mustBeBusy(t, s, key, "b")
	release(t, r2)
	release(t, acquireFree(t, s, key, "b"))
}

// TestRWLockReadHoldKeys: every read hold has a timeout key with the lease as ttl, as in
// Redisson; the last release leaves no key behind.
func TestRWLockReadHoldKeys(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "rw-lock")
	s := e.strategy(t, withTTL(time.Minute))
	sl := s.(strategies.SharedLocker)
	key := redistest.Prefix(t) + "rw"
	ctx := context.Background()
	var held []strategies.Lease
	for range 2 {
		l, err := sl.AcquireShared(ctx, key, "r")
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, l)
	}
	for _, i := range []string{"1", "2"} {
		k := "{" + key + "}:r:rwlock_timeout:" + i
		if pttl, err := e.client.Do(ctx, e.client.B().Pttl().Key(k).Build()).AsInt64(); err != nil || pttl <= 0 || pttl > time.Minute.Milliseconds() {
			t.Fatalf("PTTL %s = %d, %v; want the lease", k, pttl, err)
		}
	}
	for _, l := range held {
		release(t, l)
	}
	if n, err := e.client.Do(ctx, e.client.B().Keys().Pattern("{"+key+"}*").Build()).AsStrSlice(); err != nil || len(n) != 0 {
		t.Fatalf("keys left after the last read release: %v, %v", n, err)
	}
}
