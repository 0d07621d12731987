package strategies_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/redistest"
	"github.com/lockbench/lockbench/strategies"
)

// TestConformance runs every registered strategy through the same behaviours. A new
// strategy gets the whole table by registering; what a strategy does not claim (Info) it is
// not held to here — the weakness tests prove those gaps instead.
func TestConformance(t *testing.T) {
	for _, name := range strategies.Names() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, name)
			info, _ := strategies.Lookup(name)
			for _, c := range conformance {
				t.Run(c.name, func(t *testing.T) {
					if c.applies != nil && !c.applies(info) {
						t.Skipf("%s does not claim this", name)
					}
					c.run(t, e, redistest.Prefix(t))
				})
			}
		})
	}
}

var conformance = []struct {
	name    string
	applies func(strategies.Info) bool
	run     func(t *testing.T, e *env, prefix string)
}{
	{"MutualExclusion/spin", safe, mutualExclusion("spin:1ms")},
	{"MutualExclusion/backoff", safe, mutualExclusion("backoff:1ms..20ms")},
	{"MutualExclusion/pubsub", safe, mutualExclusion("pubsub")},
	{"ExpiresAfterTTL", expires, expiresAfterTTL},
	{"ReleaseByNonOwner", func(i strategies.Info) bool { return i.SafeUnlock }, releaseByNonOwner},
	{"ReleaseTwice", nil, releaseTwice},
	{"CancelWhileWaiting/backoff", nil, cancelWhileWaiting("backoff")},
	{"CancelWhileWaiting/pubsub", nil, cancelWhileWaiting("pubsub")},
	{"Reentry", func(i strategies.Info) bool { return i.Reentrant }, reentry},
	{"SameOwnerContends", func(i strategies.Info) bool { return !i.Reentrant }, sameOwnerContends},
	{"WatchdogRenews", func(i strategies.Info) bool { return i.AutoRenew }, watchdogRenews},
	{"EmptyKey", nil, emptyKey},
	{"PermitsBound/backoff", semaphores, permitsBound("backoff:1ms..20ms")},
	{"PermitsBound/pubsub", semaphores, permitsBound("pubsub")},
	{"SharedReaders", shared, sharedReaders},
	{"SetAllOrNone", sets, setAllOrNone},
}

func safe(i strategies.Info) bool { return i.SafeWithoutFaults }

// expires: a dead holder's lock frees itself. RSemaphore's permits never do; its weakness
// test proves the leak instead.
func expires(i strategies.Info) bool { return i.Name != "semaphore" }

func semaphores(i strategies.Info) bool { return i.Capacity == strategies.CapacitySemaphore }
func shared(i strategies.Info) bool     { return i.Capacity == strategies.CapacityRW }
func sets(i strategies.Info) bool       { return i.Capacity == strategies.CapacitySet }

// mutualExclusion: 50 goroutines take one key 10 times each; a holder counter must never
// exceed 1 and every acquisition must complete.
func mutualExclusion(wait string) func(t *testing.T, e *env, prefix string) {
	return func(t *testing.T, e *env, prefix string) {
		w, err := strategies.ParseWait(wait)
		if err != nil {
			t.Fatal(err)
		}
		s := e.strategy(t, func(o *strategies.Options) { o.Wait = w })
		const workers, rounds = 50, 10
		key := prefix + "hot"
		var inside, maxInside, done atomic.Int32
		var wg sync.WaitGroup
		errs := make(chan error, workers)
		for i := range workers {
			wg.Go(func() {
				owner := fmt.Sprintf("w%d", i)
				for range rounds {
					ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
					l, err := s.Acquire(ctx, key, owner)
					cancel()
					if err != nil {
						errs <- err
						return
					}
					n := inside.Add(1)
					for m := maxInside.Load(); n > m && !maxInside.CompareAndSwap(m, n); m = maxInside.Load() {
					}
					time.Sleep(50 * time.Microsecond) // widen the window an overlap needs
					inside.Add(-1)
					if err := l.Release(context.Background()); err != nil {
						errs <- err
						return
					}
					done.Add(1)
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("worker: %v", err)
		}
		if m := maxInside.Load(); m != 1 {
			t.Fatalf("%d holders were inside at once, want 1", m)
		}
		if d := done.Load(); d != workers*rounds {
			t.Fatalf("%d acquisitions completed, want %d", d, workers*rounds)
		}
	}
}

// expiresAfterTTL: a holder that never releases blocks others only until its ttl passes.
func expiresAfterTTL(t *testing.T, e *env, prefix string) {
	const ttl = 200 * time.Millisecond
	s := e.strategy(t, withTTL(ttl))
	key := prefix + "k"
	acquire(t, s, key, "crashed") // never released
	mustBeBusy(t, s, key, "b", 50*time.Millisecond)
	time.Sleep(ttl + 100*time.Millisecond)
	l, err := tryFor(s, key, "b", 2*time.Second)
	if err != nil {
		t.Fatalf("lock still held %s after its ttl ran out: %v", ttl+100*time.Millisecond, err)
	}
	release(t, l)
}

// releaseByNonOwner: a holder whose lease expired and was taken by someone else must not be
// able to release the new holder's lock.
func releaseByNonOwner(t *testing.T, e *env, prefix string) {
	const ttl = 150 * time.Millisecond
	s := e.strategy(t, withTTL(ttl))
	// The new holder is another client whose lease outlasts the test: on the short ttl a
	// stall could let its lock lapse before the checks, and a release that deleted it could
	// not be told from one that found nothing.
	other := e.strategy(t, withTTL(time.Minute))
	key := prefix + "k"
	old := acquire(t, s, key, "a")
	time.Sleep(ttl + 100*time.Millisecond)
	cur := acquire(t, other, key, "b")
	if err := old.Release(context.Background()); !errors.Is(err, strategies.ErrNotOwner) {
		t.Fatalf("release of an expired lease: want ErrNotOwner, got %v", err)
	}
	mustBeBusy(t, s, key, "c", 50*time.Millisecond) // b still holds it
	release(t, cur)
}

func releaseTwice(t *testing.T, e *env, prefix string) {
	s := e.strategy(t, nil)
	l := acquire(t, s, prefix+"k", "a")
	release(t, l)
	if err := l.Release(context.Background()); !errors.Is(err, strategies.ErrReleased) {
		t.Fatalf("second Release: want ErrReleased, got %v", err)
	}
}

// cancelWhileWaiting: cancelling a waiter returns promptly with ErrNotAcquired and the
// cause, and leaves nothing behind that delays the next acquirer.
func cancelWhileWaiting(wait string) func(t *testing.T, e *env, prefix string) {
	return func(t *testing.T, e *env, prefix string) {
		w, _ := strategies.ParseWait(wait)
		s := e.strategy(t, func(o *strategies.Options) { o.Wait = w })
		key := prefix + "k"
		holder := acquire(t, s, key, "holder")

		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(100*time.Millisecond, cancel)
		start := time.Now()
		_, err := s.Acquire(ctx, key, "waiter") // no deadline: it waits until cancelled
		if !errors.Is(err, strategies.ErrNotAcquired) || !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled wait: want ErrNotAcquired and context.Canceled, got %v", err)
		}
		if took := time.Since(start); took > 2*time.Second {
			t.Fatalf("cancelled wait returned after %s", took)
		}
		release(t, holder)
		l, err := tryFor(s, key, "next", 2*time.Second) // ttl is 10s: residue would block this
		if err != nil {
			t.Fatalf("after the holder released, the next acquire failed: %v", err)
		}
		release(t, l)
	}
}

// reentry: the same owner re-enters without waiting; the lock is free only after the last
// release.
func reentry(t *testing.T, e *env, prefix string) {
	s := e.strategy(t, nil)
	key := prefix + "k"
	outer := acquire(t, s, key, "a")
	inner, err := tryFor(s, key, "a", 200*time.Millisecond)
	if err != nil {
		t.Fatalf("re-entry by the holder: %v", err)
	}
	release(t, inner)
	mustBeBusy(t, s, key, "b", 50*time.Millisecond)
	release(t, outer)
	release(t, acquire(t, s, key, "b"))
}

// sameOwnerContends: a non-reentrant strategy treats the holder asking again as contention.
func sameOwnerContends(t *testing.T, e *env, prefix string) {
	s := e.strategy(t, nil)
	key := prefix + "k"
	l := acquire(t, s, key, "a")
	mustBeBusy(t, s, key, "a", 100*time.Millisecond)
	release(t, l)
}

// watchdogRenews: with renewal on, a hold several ttls long keeps the lock; renewal stops
// with the release.
func watchdogRenews(t *testing.T, e *env, prefix string) {
	const ttl = 300 * time.Millisecond
	s := e.strategy(t, func(o *strategies.Options) {
		o.TTL = ttl
		o.Watchdog = strategies.Watchdog{Auto: true}
	})
	key := prefix + "k"
	l := acquire(t, s, key, "a")
	time.Sleep(3 * ttl)
	mustBeBusy(t, s, key, "b", 50*time.Millisecond)
	select {
	case <-l.Lost():
		t.Fatal("lease reported lost while the watchdog should keep it")
	default:
	}
	if n := s.Stats().Renewals; n < 4 {
		t.Fatalf("%d renewals over %s with interval %s, want at least 4", n, 3*ttl, ttl/3)
	}
	release(t, l)
	after := s.Stats().Renewals
	time.Sleep(ttl)
	if n := s.Stats().Renewals; n != after {
		t.Fatalf("renewals went on after release: %d -> %d", after, n)
	}
	release(t, acquire(t, s, key, "b"))
}

func emptyKey(t *testing.T, e *env, _ string) {
	s := e.strategy(t, nil)
	_, err := s.Acquire(context.Background(), "", "a")
	var oe *strategies.OptionError
	if !errors.As(err, &oe) || oe.Field != "key" {
		t.Fatalf("empty key: want an OptionError naming key, got %v", err)
	}
}
