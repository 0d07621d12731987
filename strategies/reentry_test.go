package strategies_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/lockbench/lockbench/strategies"
)

// TestReentryNeverWaitsBehindOthers: a holder's nested acquire of a reentrant lock tries at
// once, under every wait policy, while others of its process (and of another) wait for the
// lock it holds. Queued behind them, as the pubsub scheduler's local FIFO used to queue it,
// it slept until its own lease lapsed: nothing woke it, since they wait for its release. The
// ttl here outlasts the nested acquire's patience, so a nested acquire that waits for the
// lease to lapse fails the test instead of letting a waiter in beside the holder.
// reentryTTL is the lease of TestReentryNeverWaitsBehindOthers's locks.
const reentryTTL = 10 * time.Second

func TestReentryNeverWaitsBehindOthers(t *testing.T) {
	var names []string
	for _, info := range strategies.Catalog() {
		if info.Reentrant && info.Service == "" && info.Applies == nil || info.Name == "spin-lock" {
			names = append(names, info.Name)
		}
	}
	if len(names) < 6 {
		t.Fatalf("reentrant strategies: %v; the catalog lost some", names)
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, name)
			for _, wait := range []string{"native", "spin", "backoff", "pubsub"} {
				w, err := strategies.ParseWait(wait)
				if err != nil {
					t.Fatal(err)
				}
				for _, procs := range []int{1, 2} {
					t.Run(fmt.Sprintf("%s/procs=%d", wait, procs), func(t *testing.T) {
						// Each "process" is a strategy of its own: its own notifier, local
						// queue and turn channel.
						// The ttl outlasts the holder's part by far, and it bounds the cost of
						// a wake-up Redisson's own wait may miss: a write unlock wakes the
						// waiters asleep on the latch then (Semaphore.release(getQueueLength())),
						// and one between its failed try and its sleep sleeps the remaining
						// lease (rw-lock under --wait native: 60 s a time with a 60 s ttl).
						ss := make([]strategies.Strategy, procs)
						for i := range ss {
							ss[i] = e.strategy(t, func(o *strategies.Options) { o.Wait, o.TTL = w, strategies.TTLOf(reentryTTL) })
						}
						checkReentryFirst(t, ss, fmt.Sprintf("reentry-%s-%d", wait, procs))
					})
				}
			}
		})
	}
}

// checkReentryFirst holds key in ss[0], queues waiters in every strategy of ss, and checks
// that the holder re-enters while they wait, and that they get the lock once it let go.
func checkReentryFirst(t *testing.T, ss []strategies.Strategy, key string) {
	t.Helper()
	holder := ss[0]
	outer := acquireFree(t, holder, key, "holder")

	const perProc = 3
	ctx, cancel := context.WithTimeout(context.Background(), 3*patience)
	defer cancel()
	type got struct {
		l   strategies.Lease
		err error
	}
	results := make(chan got, perProc*len(ss))
	var wg sync.WaitGroup
	defer wg.Wait()
	for p, s := range ss {
		for i := range perProc {
			before := s.Stats().FailedAttempts
			wg.Go(func() {
				l, err := s.Acquire(ctx, key, fmt.Sprintf("waiter-%d-%d", p, i))
				results <- got{l, err}
			})
			// One waiter at a time, each seen waiting (a failed attempt), so that the local
			// queue has waiters ahead of the holder's re-entry.
			pollUntil(t, "a waiter to find the lock taken", func() bool { return s.Stats().FailedAttempts > before })
		}
	}

	nested, err := tryFor(holder, key, "holder", patience)
	if err != nil {
		cancel()
		release(t, outer)
		t.Fatalf("%s: the holder's nested acquire waited behind the waiters for the lock it holds: %v", holder.Info().Name, err)
	}
	select {
	case r := <-results:
		t.Fatalf("%s: a waiter acquired beside the holder (err %v)", holder.Info().Name, r.err)
	default:
	}
	release(t, nested)
	release(t, outer)
	// The waiters follow one another.
	for range perProc * len(ss) {
		r := <-results
		if r.err != nil {
			t.Fatalf("%s: a waiter did not get the lock once it was free: %v", holder.Info().Name, r.err)
		}
		if err := r.l.Release(context.Background()); err != nil && !errors.Is(err, strategies.ErrNotOwner) {
			t.Fatalf("%s: release: %v", holder.Info().Name, err)
		}
	}
}
