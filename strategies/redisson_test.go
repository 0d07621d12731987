package strategies_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/lockbench/lockbench/internal/redistest"
	"github.com/lockbench/lockbench/strategies"
)

// TestPartialReleaseRearmsTTL sets Redisson's locks beside seed 001's hash lock: a nested
// hold is released once, after the lease has run down to below half its ttl. Redisson's
// unlock re-arms the lease (PEXPIRE while holds remain); reentrant-hash's leaves it running
// down, so the outer hold can lapse although it was never released.
func TestPartialReleaseRearmsTTL(t *testing.T) {
	const ttl = 4 * time.Second
	for _, tc := range []struct {
		name   string
		rearms bool
	}{
		{"redisson-lock", true},
		{"spin-lock", true},
		{"reentrant-hash", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, tc.name)
			s := e.strategy(t, withTTL(ttl))
			// A hash-tagged name: every strategy stores its lock under exactly this key.
			key := "{" + redistest.Prefix(t) + "k}"
			outer := acquire(t, s, key, "a")
			inner := acquire(t, s, key, "a")
			before := waitPTTLBelow(t, e.client, key, ttl/2)
			release(t, inner)
			after := pttl(t, e.client, key)
			if tc.rearms && after < 3*ttl/4 {
				t.Errorf("after a nested release the lease runs %s more (was %s): want it re-armed to near the ttl %s", after, before, ttl)
			}
			if !tc.rearms && after > before {
				t.Errorf("after a nested release the lease runs %s more (was %s): want it not re-armed", after, before)
			}
			release(t, outer)
			if n, err := e.client.Do(context.Background(), e.client.B().Exists().Key(key).Build()).AsInt64(); err != nil || n != 0 {
				t.Errorf("after the last release the lock exists (%d, %v), want it deleted", n, err)
			}
		})
	}
}

// TestRedissonLockPublishes: without the pubsub wait policy, redisson-lock announces a freed
// lock on the lock's own channel with Redisson's unlock message, and a partial release
// announces nothing.
func TestRedissonLockPublishes(t *testing.T) {
	e := newEnv(t, "redisson-lock")
	s := e.strategy(t, nil)
	key := redistest.Prefix(t) + "k"
	ch := "redisson_lock__channel:{" + key + "}"

	msgs := make(chan string, 8)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = e.client.Receive(ctx, e.client.B().Subscribe().Channel(ch).Build(), func(m rueidis.PubSubMessage) { msgs <- m.Message })
	}()
	t.Cleanup(func() { cancel(); <-done })
	pollUntil(t, "the subscription", func() bool {
		m, err := e.client.Do(context.Background(), e.client.B().PubsubNumsub().Channel(ch).Build()).AsIntMap()
		return err == nil && m[ch] == 1
	})

	outer := acquire(t, s, key, "a")
	release(t, acquire(t, s, key, "a"))
	// A marker published after the partial release: the first message must be it.
	if err := e.client.Do(context.Background(), e.client.B().Publish().Channel(ch).Message("marker").Build()).Error(); err != nil {
		t.Fatal(err)
	}
	release(t, outer)
	for i, want := range []string{"marker", "0"} {
		select {
		case got := <-msgs:
			if got != want {
				t.Fatalf("message %d on %s: %q, want %q", i, ch, got, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("message %d on %s: none, want %q", i, ch, want)
		}
	}
}

func pttl(t *testing.T, c rueidis.Client, key string) time.Duration {
	t.Helper()
	ms, err := c.Do(context.Background(), c.B().Pttl().Key(key).Build()).AsInt64()
	if err != nil || ms < 0 {
		t.Fatalf("PTTL %s: %d, %v: want a lock with a ttl", key, ms, err)
	}
	return time.Duration(ms) * time.Millisecond
}

// waitPTTLBelow polls key's PTTL until it is below d and returns it.
func waitPTTLBelow(t *testing.T, c rueidis.Client, key string, d time.Duration) time.Duration {
	t.Helper()
	var left time.Duration
	pollUntil(t, "PTTL below "+d.String(), func() bool {
		left = pttl(t, c, key)
		return left < d
	})
	return left
}

// TestRedissonFairGrantsInQueueOrder: redisson-fair's waiters queue by owner in
// redisson_lock_queue:{name}, each timing out a thread wait time after the one before it in
// redisson_lock_timeout:{name}, and take the lock in that order, woken on their own channels.
// The thread wait is the acquire's wait time, as tryLock(waitTime) makes it (here the
// helpers' patience), not lock()'s 5 minutes.
func TestRedissonFairGrantsInQueueOrder(t *testing.T) {
	t.Parallel()
	for _, wait := range []string{"pubsub", "spin:2ms", "backoff"} {
		t.Run(wait, func(t *testing.T) {
			e := newEnv(t, "redisson-fair")
			w, _ := strategies.ParseWait(wait)
			s := e.strategy(t, func(o *strategies.Options) { o.Wait = w })
			key := redistest.Prefix(t) + "k"
			queue, timeouts := "redisson_lock_queue:{"+key+"}", "redisson_lock_timeout:{"+key+"}"
			holder := acquire(t, s, key, "holder")

			const waiters = 5
			var mu sync.Mutex
			var order []int
			var wg sync.WaitGroup
			for i := range waiters {
				wg.Go(func() {
					l := acquire(t, s, key, fmt.Sprintf("w%d", i))
					mu.Lock()
					order = append(order, i)
					mu.Unlock()
					release(t, l)
				})
				pollUntil(t, fmt.Sprintf("waiter %d queued", i), func() bool {
					n, _ := e.client.Do(context.Background(), e.client.B().Llen().Key(queue).Build()).AsInt64()
					return n == int64(i+1)
				})
			}
			scores, err := e.client.Do(context.Background(), e.client.B().Zrange().Key(timeouts).Min("0").Max("-1").Withscores().Build()).AsZScores()
			if err != nil || len(scores) != waiters {
				t.Fatalf("timeouts %v, %v: want %d waiters", scores, err, waiters)
			}
			for i := 1; i < waiters; i++ {
				if gap := time.Duration(scores[i].Score-scores[i-1].Score) * time.Millisecond; gap < patience/2 || gap > patience {
					t.Errorf("waiter %d times out %s after the one before it, want the thread wait time: its acquire's wait time, %s", i, gap, patience)
				}
			}
			release(t, holder)
			wg.Wait()
			for i, got := range order {
				if got != i {
					t.Fatalf("grant order %v, want queue order 0..%d", order, waiters-1)
				}
			}
			if n, _ := e.client.Do(context.Background(), e.client.B().Exists().Key(queue, timeouts).Build()).AsInt64(); n != 0 {
				t.Errorf("queue or timeouts left behind (%d keys) after every waiter took the lock", n)
			}
		})
	}
}

// TestRedissonFairAfterCrashedHolder: a holder of redisson-fair that dies holding the lock
// (no release, no watchdog) keeps its queue waiting only until its lease ends; then the head
// takes it, without a release message, and every waiter gets it in queue order.
func TestRedissonFairAfterCrashedHolder(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "redisson-fair")
	s := e.strategy(t, withTTL(300*time.Millisecond))
	key := redistest.Prefix(t) + "k"
	queue := "redisson_lock_queue:{" + key + "}"
	_ = acquire(t, s, key, "dead") // never released: its holder died

	const waiters = 3
	got := make(chan int, waiters)
	var wg sync.WaitGroup
	for i := range waiters {
		wg.Go(func() {
			l := acquire(t, s, key, fmt.Sprintf("w%d", i))
			got <- i
			release(t, l)
		})
		// Queued, or (on a slow machine, the lease over already) through.
		pollUntil(t, fmt.Sprintf("waiter %d queued", i), func() bool {
			n, _ := e.client.Do(context.Background(), e.client.B().Llen().Key(queue).Build()).AsInt64()
			return n+int64(len(got)) >= int64(i+1)
		})
	}
	wg.Wait()
	close(got)
	i := 0
	for w := range got {
		if w != i {
			t.Fatalf("waiter %d took the lock %d-th, want queue order", w, i)
		}
		i++
	}
}

// TestRedissonDefaultLease: given no lease (Options.DefaultLease) and no watchdog, the
// Redisson locks run as Redisson's lock(): lockWatchdogTimeout's 30s lease, renewed every
// 10s; given a ttl, as tryLock(waitTime, leaseTime): that lease, no watchdog.
func TestRedissonDefaultLease(t *testing.T) {
	for _, name := range []string{"redisson-lock", "spin-lock", "redisson-fair", "rw-lock", "multilock"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, name)
			key := redistest.Prefix(t) + "k"
			def := e.strategy(t, func(o *strategies.Options) { o.TTL = strategies.TTL{} }) // nobody chose the ttl
			ttl, renewal, call := def.(strategies.LeaseReporter).Lease()
			if ttl != 30*time.Second || renewal != 10*time.Second || !strings.Contains(call, "lockWatchdogTimeout 30s") {
				t.Errorf("default lease: %s renewed every %s (%q), want Redisson's lock(): 30s renewed every 10s", ttl, renewal, call)
			}
			l := acquire(t, def, key, "a")
			if left := pttl(t, e.client, "{"+key+"}"); left <= 20*time.Second {
				t.Errorf("default lease: the lock's PTTL is %s, want near 30s", left)
			}
			release(t, l)

			given := e.strategy(t, withTTL(2*time.Second))
			ttl, renewal, call = given.(strategies.LeaseReporter).Lease()
			if ttl != 2*time.Second || renewal != 0 || !strings.Contains(call, "leaseTime 2s") {
				t.Errorf("--ttl 2s: %s renewed every %s (%q), want tryLock(waitTime, leaseTime 2s), no watchdog", ttl, renewal, call)
			}
			l = acquire(t, given, key, "a")
			if left := pttl(t, e.client, "{"+key+"}"); left > 2*time.Second {
				t.Errorf("--ttl 2s: the lock's PTTL is %s, want at most 2s", left)
			}
			release(t, l)
		})
	}
}

// TestRedissonOneRenewalPerLock: Redisson renews a lock once however often its owner
// re-entered it (renewal/LockEntry counts the holds): the nested holds of one owner share one
// watchdog (one Lost channel), and releasing the inner ones leaves the outer hold renewed.
func TestRedissonOneRenewalPerLock(t *testing.T) {
	for _, name := range []string{"redisson-lock", "redisson-fair", "rw-lock"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, name)
			const ttl = 900 * time.Millisecond
			s := e.strategy(t, func(o *strategies.Options) {
				o.TTL, o.Watchdog = strategies.TTLOf(ttl), strategies.Watchdog{Auto: true}
			})
			key := redistest.Prefix(t) + "k"
			outer := acquire(t, s, key, "a")
			inner := []strategies.Lease{acquire(t, s, key, "a"), acquire(t, s, key, "a")}
			for i, l := range inner {
				if l.Lost() != outer.Lost() {
					t.Errorf("nested hold %d has a watchdog of its own, want the lock's one renewal", i+1)
				}
			}
			for _, l := range inner {
				release(t, l)
			}
			before := s.Stats().Renewals
			pollUntil(t, "two renewals after the nested holds left", func() bool { return s.Stats().Renewals >= before+2 })
			select {
			case <-outer.Lost():
				t.Fatal("the outer hold was lost after the nested holds left")
			default:
			}
			release(t, outer)
		})
	}
}
