package strategies_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/lockbench/lockbench/internal/redistest"
	"github.com/lockbench/lockbench/strategies"
)

// These tests prove each seed's weakness on a real server: they assert the bad outcome, so
// "fixing" a strategy makes its test fail. That is the point: lockbench exists to show it.

// Seed 004, first version: a holder whose lease expired deletes the next holder's lock.
func TestWeaknessSetNXDelDeletesAnotherOwnersLock(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "set-nx-del")
	const ttl = 150 * time.Millisecond
	s := e.strategy(t, withTTL(ttl))
	key := redistest.Prefix(t) + "k"

	// The next holder is another client whose lease outlasts the test: on the short ttl its
	// lock could lapse by itself before the slow holder's DEL, which would then prove nothing.
	other := e.strategy(t, withTTL(time.Minute))

	slow := acquire(t, s, key, "slow")
	next := acquire(t, other, key, "next") // once the slow holder's lease ran out mid-work
	if err := slow.Release(context.Background()); err != nil {
		t.Fatalf("blind DEL reported %v; it cannot know the lock is no longer its own", err)
	}
	if n, _ := e.client.Do(context.Background(), e.client.B().Exists().Key(key).Build()).AsInt64(); n != 0 {
		t.Fatal("the next holder's lock survived the slow holder's DEL; set-nx-del is supposed to delete it")
	}
	third := acquire(t, s, key, "third") // walks in while "next" is still inside
	release(t, third)
	release(t, next)
}

// Seeds 003/004's check-then-delete unlock: get-del's GET compares the token right, but a
// pause before its DEL lets the lease lapse and pass on, and the DEL then deletes the next
// holder's lock. The same stall in token's release is harmless: its compare-and-delete is
// one script, and it finds the lock no longer its own. Nothing here sleeps: A's release is
// held in the hook exactly until B holds the lock, which B can only take once A's ttl ran out.
func TestWeaknessGetDelPauseDeletesTheNextHoldersLock(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		deletes bool // A's stalled release deletes B's lock
	}{{"get-del", true}, {"token", false}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, tc.name)
			const ttl = 100 * time.Millisecond
			stalled, bHolds := make(chan struct{}), make(chan struct{})
			s := e.strategy(t, func(o *strategies.Options) {
				o.TTL = strategies.TTLOf(ttl)
				o.Hooks.ReleasePause = func(_ context.Context, _, owner string) {
					if owner == "a" {
						close(stalled) // get-del: its GET found its token
						<-bHolds
					}
				}
			})
			other := e.strategy(t, withTTL(time.Minute)) // B, a client whose lease outlasts the test
			key := redistest.Prefix(t) + "k"
			ctx := context.Background()
			exists := func() int64 {
				n, err := e.client.Do(ctx, e.client.B().Exists().Key(key).Build()).AsInt64()
				if err != nil {
					t.Fatal(err)
				}
				return n
			}

			a := acquire(t, s, key, "a")
			released := make(chan error, 1)
			go func() { released <- a.Release(ctx) }()
			<-stalled
			b := acquire(t, other, key, "b") // waits out A's ttl while A's release is paused
			close(bHolds)
			errA := <-released

			if !tc.deletes {
				if !errors.Is(errA, strategies.ErrNotOwner) {
					t.Fatalf("token's stalled release: want ErrNotOwner, got %v", errA)
				}
				if exists() != 1 {
					t.Fatal("token's stalled release deleted the next holder's lock")
				}
				mustBeBusy(t, s, key, "c")
				release(t, b)
				return
			}
			if errA != nil {
				t.Fatalf("get-del's release reported %v; its GET saw its own token, so it cannot know", errA)
			}
			if exists() != 0 {
				t.Fatal("B's lock survived A's DEL; get-del is supposed to delete it")
			}
			if _, err := e.client.Do(ctx, e.client.B().Get().Key(key).Build()).ToString(); !rueidis.IsRedisNil(err) {
				t.Fatalf("GET after A's DEL: want nil, got %v", err)
			}
			third := acquire(t, s, key, "c") // walks in while B believes it holds the lock
			release(t, third)
			if err := b.Release(ctx); !errors.Is(err, strategies.ErrNotOwner) {
				t.Fatalf("B's release after its lock was deleted: want ErrNotOwner, got %v", err)
			}
		})
	}
}

// Without a pause, get-del's client-side check does what the script does: a holder whose
// lease expired gets ErrNotOwner and the next holder's lock survives. (It claims no
// SafeUnlock, so the conformance suite does not hold it to this; the gap is only the pause.)
func TestGetDelChecksOwnershipWithoutAPause(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "get-del")
	const ttl = 100 * time.Millisecond
	s := e.strategy(t, withTTL(ttl))
	// The next holder's lease outlasts the test: on the short ttl a stall between its acquire
	// and the checks would let its lock lapse too, and nothing would be left to protect. A
	// blind DEL still deletes it, and "c" then walks in.
	other := e.strategy(t, withTTL(time.Minute))
	key := redistest.Prefix(t) + "k"
	old := acquire(t, s, key, "a")
	waitGone(t, e.client, key)
	if err := old.Release(context.Background()); !errors.Is(err, strategies.ErrNotOwner) {
		t.Fatalf("release of an expired lease, nobody holding: want ErrNotOwner, got %v", err)
	}
	old = acquire(t, s, key, "a")
	cur := acquire(t, other, key, "b") // once a's lease ran out
	if err := old.Release(context.Background()); !errors.Is(err, strategies.ErrNotOwner) {
		t.Fatalf("release of a lease taken over: want ErrNotOwner, got %v", err)
	}
	mustBeBusy(t, s, key, "c")
	release(t, cur)
}

// Seed 003: a client that dies between SETNX and EXPIRE leaves a lock without a ttl.
func TestWeaknessSetNXExpireCrashLeavesLockWithoutTTL(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "setnx-expire")
	const ttl = 100 * time.Millisecond
	crash := errors.New("SIGKILL")
	dying := e.strategy(t, func(o *strategies.Options) {
		o.TTL = strategies.TTLOf(ttl)
		o.Hooks.AfterSetNX = func(context.Context, string, string) error { return crash }
	})
	healthy := e.strategy(t, withTTL(ttl))
	key := redistest.Prefix(t) + "k"

	_, err := tryFor(dying, key, "dies", time.Second)
	if !errors.Is(err, strategies.ErrCrashed) || !errors.Is(err, crash) {
		t.Fatalf("want the simulated crash, got %v", err)
	}
	pttl, err := e.client.Do(context.Background(), e.client.B().Pttl().Key(key).Build()).AsInt64()
	if err != nil || pttl != -1 {
		t.Fatalf("PTTL = %d (%v), want -1: a key that exists without a ttl", pttl, err)
	}
	// Deadlock: a key without a ttl never expires (no need to wait one out), and a healthy
	// client finds it taken.
	mustBeBusy(t, healthy, key, "anyone")
}

// Seed 000 §1: two clients whose clocks disagree both take over one stale lock.
func TestWeaknessGetsetTwoClientsTakeOverStaleLock(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "getset")
	const ttl = time.Second
	s := e.strategy(t, withTTL(ttl))
	key := redistest.Prefix(t) + "k"
	// A holder died long ago and left its timestamp behind.
	stale := time.Now().Add(-3 * ttl).UnixMilli()
	if err := e.client.Do(context.Background(), e.client.B().Set().Key(key).Value(strconv.FormatInt(stale, 10)).Build()).Error(); err != nil {
		t.Fatal(err)
	}
	// Client A's clock runs 1.5 ttl behind: the lock looks stale to it (3 ttl - 1.5 ttl old),
	// so it takes over and writes its own time, which is 1.5 ttl in the past. Client B, on
	// time, then finds A's timestamp stale as well and takes over a lock A holds.
	behind := func() time.Time { return time.Now().Add(-3 * ttl / 2) }
	ctxA, cancel := context.WithTimeout(strategies.WithClock(context.Background(), behind), patience)
	defer cancel()
	leaseA, err := s.Acquire(ctxA, key, "a")
	if err != nil {
		t.Fatalf("client A (clock behind) should take over the stale lock: %v", err)
	}
	// B's first GETSET decides: it reads A's timestamp, 1.5 ttl old by B's clock, and takes
	// over. A retry would read B's own timestamp, which a stall could age past the ttl, so B
	// makes one attempt only: it would wait a minute before the next, past patience.
	onlyOnce := e.strategy(t, func(o *strategies.Options) {
		o.TTL = strategies.TTLOf(ttl)
		o.Wait = strategies.Wait{Kind: strategies.WaitSpin, Interval: time.Minute}
	})
	leaseB, err := tryFor(onlyOnce, key, "b", patience)
	if err != nil {
		t.Fatalf("client B should take over too while A holds it — both hold the lock: %v", err)
	}
	release(t, leaseA)
	release(t, leaseB)
}

// Seed 000 §1, noted in its own comments: every failed GETSET writes the loser's time, so a
// dead holder's lock never turns stale while someone keeps retrying. The patient client's
// clock moves a quarter ttl per attempt, from the dead holder's timestamp on: ten ttls on
// by its own clock, the lock still looks fresh to it. No real time is involved.
func TestWeaknessGetsetRetriesKeepDeadLockFresh(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "getset")
	const ttl, attempts = 200 * time.Millisecond, 40
	s := e.strategy(t, func(o *strategies.Options) {
		o.TTL = strategies.TTLOf(ttl)
		o.Wait = strategies.Wait{Kind: strategies.WaitSpin, Interval: time.Millisecond}
	})
	key := redistest.Prefix(t) + "k"
	acquire(t, s, key, "dead") // never released
	stamp, err := e.client.Do(context.Background(), e.client.B().Get().Key(key).Build()).AsInt64()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	var reads atomic.Int64
	clock := func() time.Time {
		n := reads.Add(1)
		if n == attempts {
			cancel() // this attempt is the last
		}
		return time.UnixMilli(stamp).Add(time.Duration(n) * ttl / 4)
	}
	l, err := s.Acquire(strategies.WithClock(ctx, clock), key, "patient")
	if err == nil {
		_ = l.Release(context.Background())
		t.Fatalf("the patient client took the dead holder's lock after %d attempts, %s on by its clock", reads.Load(), time.Duration(reads.Load())*ttl/4)
	}
	if !errors.Is(err, strategies.ErrNotAcquired) || !errors.Is(err, context.Canceled) || reads.Load() < attempts {
		t.Fatalf("want ErrNotAcquired after %d attempts, got %v after %d", attempts, err, reads.Load())
	}
}

// Seed 000 §2: a client whose clock runs ahead judges a live lock stale and spins on
// SET/GET without pausing until Redis expires the key. Both clients are told to pause a
// minute between attempts: the one on time makes one attempt and pauses; the fast one makes
// twenty meanwhile. Counts, not rates: no window of time is judged. The lease is a minute
// long too, so the holder's lock is there all along.
func TestWeaknessSetNXStaleFastClockSpins(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "setnx-stale")
	const ttl, spins = time.Minute, 20
	wait := strategies.Wait{Kind: strategies.WaitSpin, Interval: time.Minute}
	onTime := e.strategy(t, func(o *strategies.Options) { o.TTL, o.Wait = strategies.TTLOf(ttl), wait })
	fast := e.strategy(t, func(o *strategies.Options) {
		o.TTL, o.Wait = strategies.TTLOf(ttl), wait
		o.Clock = func() time.Time { return time.Now().Add(2 * ttl) }
	})
	key := redistest.Prefix(t) + "k"
	holder := acquire(t, onTime, key, "holder")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errs := make(chan error, 2)
	for _, c := range []struct {
		s     strategies.Strategy
		owner string
	}{{onTime, "calm"}, {fast, "spinner"}} {
		go func() {
			l, err := c.s.Acquire(ctx, key, c.owner)
			if err == nil {
				_ = l.Release(context.Background())
				err = fmt.Errorf("%s acquired a lock the holder keeps", c.owner)
			}
			errs <- err
		}()
	}
	pollUntil(t, fmt.Sprintf("the fast clock to spin %d times", spins), func() bool {
		return onTime.Stats().FailedAttempts >= 1 && fast.Stats().FailedAttempts >= spins
	})
	cancel()
	for range 2 {
		if err := <-errs; !errors.Is(err, strategies.ErrNotAcquired) {
			t.Fatalf("want ErrNotAcquired once cancelled, got %v", err)
		}
	}
	if calm := onTime.Stats().FailedAttempts; calm != 1 {
		t.Fatalf("the client on time made %d attempts while the fast one spun %d times; told to pause a minute, it makes 1", calm, spins)
	}
	release(t, holder)
}

// Seeds 003/004: without a watchdog, a hold longer than the ttl (a GC pause) lets a second
// holder in. With the watchdog it does not: token claims AutoRenew, so the conformance
// case WatchdogRenews holds it to that.
func TestWeaknessTokenLosesLockWhenHoldExceedsTTL(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "token")
	const ttl = 150 * time.Millisecond
	key := redistest.Prefix(t) + "k"

	s := e.strategy(t, withTTL(ttl))
	// The second holder is another client whose lease outlasts the test: on the short ttl a
	// stall before its own release would let its lease lapse as well.
	other := e.strategy(t, withTTL(time.Minute))
	paused := acquire(t, s, key, "paused")
	second := acquire(t, other, key, "second") // once paused's lease ran out: two holders, as far as each knows
	if err := paused.Release(context.Background()); !errors.Is(err, strategies.ErrNotOwner) {
		t.Fatalf("the paused holder's release: want ErrNotOwner, got %v", err)
	}
	release(t, second)

}

// Seed 001: the ThreadLocal count outlives the Redis lease — a re-entry "succeeds" locally
// while another client holds the lock. The Redis-hash scheme does not have this hole.
func TestWeaknessReentrantLocalCountOutlivesLease(t *testing.T) {
	t.Parallel()
	const ttl = 150 * time.Millisecond
	for _, tc := range []struct {
		name        string
		reentersBad bool
	}{{"reentrant-local", true}, {"reentrant-hash", false}} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, tc.name)
			s := e.strategy(t, withTTL(ttl))
			// b is another client, with a lease that outlasts the test: on the short ttl a
			// stall could let b's lease lapse before a's re-entry, and reentrant-hash would
			// then let a in for good reason. a's local count stays where a took the lock, in s.
			bClient := e.strategy(t, withTTL(time.Minute))
			key := redistest.Prefix(t) + "k"
			outer := acquire(t, s, key, "a")
			other := acquire(t, bClient, key, "b") // once a's lease ran out: b holds it in Redis now
			if tc.reentersBad {
				// b's lease is a minute long: a succeeds only by its stale local count.
				inner, err := tryFor(s, key, "a", patience)
				if err != nil {
					t.Fatalf("reentrant-local should let a re-enter on its stale local count: %v", err)
				}
				release(t, inner)
			} else {
				mustBeBusy(t, s, key, "a") // reentrant-hash does not let a re-enter a lock b holds
			}
			_ = outer.Release(context.Background())
			release(t, other)
		})
	}
}

// Seed 003: Redlock holds with a majority — 2 of 5 nodes down still acquires, 3 down cannot.
func TestWeaknessRedlockNeedsMajority(t *testing.T) {
	t.Parallel()
	servers := redistest.Start(t, 5)
	e := &env{name: "redlock"}
	for _, srv := range servers {
		e.nodes = append(e.nodes, redistest.Client(t, srv.Addr))
	}
	s := e.strategy(t, func(o *strategies.Options) { o.NodeTimeout = 100 * time.Millisecond })
	key := redistest.Prefix(t) + "k"

	servers[3].Kill()
	servers[4].Kill()
	release(t, acquire(t, s, key, "a")) // 3 of 5

	servers[2].Kill()
	_, err := tryFor(s, key, "a", 500*time.Millisecond)
	if !errors.Is(err, strategies.ErrNotAcquired) {
		t.Fatalf("with 2 of 5 nodes: want ErrNotAcquired, got %v", err)
	}
	for i, c := range e.nodes[:2] { // failed rounds were undone on the live nodes
		if n, _ := c.Do(context.Background(), c.B().Exists().Key(key).Build()).AsInt64(); n != 0 {
			t.Fatalf("node %d kept a lock from a failed round", i)
		}
	}
}

// Fencing tokens strictly increase across leases, also across an expired one.
func TestFencedTokensStrictlyIncrease(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "fenced")
	const ttl = 100 * time.Millisecond
	s := e.strategy(t, withTTL(ttl))
	// The ordering loop runs on the default ttl: on the short one, a holder stalled between
	// its acquire and its append would let a waiter in, and grant order would no longer be
	// append order. The short ttl is for the expired lease below.
	long := e.strategy(t, nil)
	key := redistest.Prefix(t) + "k"

	var mu sync.Mutex
	var fences []uint64 // appended inside the critical section: in grant order
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			l := acquire(t, long, key, fmt.Sprintf("w%d", i))
			mu.Lock()
			fences = append(fences, l.Fence())
			mu.Unlock()
			release(t, l)
		})
	}
	wg.Wait()
	for i := 1; i < len(fences); i++ {
		if fences[i] <= fences[i-1] {
			t.Fatalf("fence %d after %d: tokens must strictly increase (%v)", fences[i], fences[i-1], fences)
		}
	}
	if fences[0] == 0 {
		t.Fatal("fenced lease has fence 0")
	}
	expired := acquire(t, s, key, "paused")
	next := acquire(t, s, key, "next") // once paused's lease ran out
	if next.Fence() <= expired.Fence() {
		t.Fatalf("fence after an expired lease: %d <= %d", next.Fence(), expired.Fence())
	}
	release(t, next)
}

// The fair lock grants in arrival order, whether waiters are woken or poll.
func TestFairGrantsInArrivalOrder(t *testing.T) {
	t.Parallel()
	for _, wait := range []string{"pubsub", "spin:2ms"} {
		t.Run(wait, func(t *testing.T) {
			e := newEnv(t, "fair")
			w, _ := strategies.ParseWait(wait)
			s := e.strategy(t, func(o *strategies.Options) { o.Wait = w })
			key := redistest.Prefix(t) + "k"
			queue := "{" + key + "}:q"
			holder := acquire(t, s, key, "holder")

			const waiters = 6
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
				// Let waiter i queue before waiter i+1 arrives.
				waitFor(t, func() bool {
					n, _ := e.client.Do(context.Background(), e.client.B().Llen().Key(queue).Build()).AsInt64()
					return n == int64(i+1)
				})
			}
			release(t, holder)
			wg.Wait()
			for i, got := range order {
				if got != i {
					t.Fatalf("grant order %v, want arrival order 0..%d", order, waiters-1)
				}
			}
		})
	}
}

// The pubsub policy wakes one waiter per release, never the herd.
func TestPubSubWakesOneWaiterPerRelease(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "token")
	s := e.strategy(t, func(o *strategies.Options) {
		o.TTL = strategies.TTLOf(time.Minute) // the fallback timer must not fire during the test
		o.Wait = strategies.Wait{Kind: strategies.WaitPubSub}
	})
	key := redistest.Prefix(t) + "k"
	holder := acquire(t, s, key, "holder")

	const waiters = 20
	got := make(chan strategies.Lease, waiters)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for i := range waiters {
		go func() {
			if l, err := s.Acquire(ctx, key, fmt.Sprintf("w%d", i)); err == nil {
				got <- l
			}
		}()
	}
	// Every waiter fails at least once and then sleeps (those queued behind another local
	// waiter do not try at all before that): wait until the count has settled.
	before := settled(t, func() uint64 { return s.Stats().FailedAttempts }, waiters)

	// Each release wakes exactly one waiter, which wins and keeps the lock until the test
	// releases it in turn. Once every waiter has had the lock, each wait has ended and any
	// waiter a release woke in vain has counted its failed attempt: no window to watch.
	release(t, holder)
	for i := range waiters {
		var l strategies.Lease
		select {
		case l = <-got:
		case <-time.After(patience):
			t.Fatalf("release %d woke nobody", i+1)
		}
		if n := len(got); n != 0 {
			t.Fatalf("%d more waiters acquired while the winner holds the lock", n)
		}
		release(t, l)
	}
	if extra := s.Stats().FailedAttempts - before; extra != 0 {
		t.Fatalf("%d releases caused %d failed attempts: waiters woke as a herd", waiters, extra)
	}
}

// The pubsub policy survives losing its subscription connection: the next subscribe
// reconnects and subscribes again the channels that still have waiters, and a release then
// wakes them through the new connection (the fallback timer is a minute away).
func TestPubSubResubscribesAfterItsConnectionDies(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "token")
	s := e.strategy(t, func(o *strategies.Options) {
		o.TTL = strategies.TTLOf(time.Minute)
		o.Wait = strategies.Wait{Kind: strategies.WaitPubSub}
	})
	a, b := redistest.Prefix(t)+"a", redistest.Prefix(t)+"b"
	holdA, holdB := acquire(t, s, a, "holder-a"), acquire(t, s, b, "holder-b")

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	got := make(chan strategies.Lease, 2)
	waitOn := func(key string) {
		go func() {
			if l, err := s.Acquire(ctx, key, "waiter-"+key); err == nil {
				got <- l
			}
		}()
	}
	waitOn(a)
	waitOn(b)
	settled(t, func() uint64 { return s.Stats().FailedAttempts }, 2)

	killed, err := e.client.Do(ctx, e.client.B().ClientKill().TypePubsub().Build()).AsInt64()
	if err != nil || killed == 0 {
		t.Fatalf("CLIENT KILL TYPE pubsub: %d killed, %v", killed, err)
	}
	// A new waiter on a third lock finds the connection gone and reconnects.
	c := redistest.Prefix(t) + "c"
	holdC := acquire(t, s, c, "holder-c")
	waitOn(c)
	waitFor(t, func() bool {
		// a's turn channel (lockbench:turn:<key>:<process>) is subscribed again.
		chans, _ := e.client.Do(ctx, e.client.B().PubsubChannels().Pattern("lockbench:turn:"+a+":*").Build()).AsStrSlice()
		return len(chans) == 1
	})

	for _, h := range []strategies.Lease{holdA, holdB, holdC} {
		release(t, h)
		select {
		case l := <-got:
			release(t, l)
		case <-time.After(5 * time.Second):
			t.Fatal("a release after the reconnect woke nobody")
		}
	}
}

// settled waits until count() is at least least and has not changed for 100ms, and returns it.
func settled(t *testing.T, count func() uint64, least uint64) uint64 {
	t.Helper()
	last, since := count(), time.Now()
	waitFor(t, func() bool {
		if c := count(); c != last {
			last, since = c, time.Now()
		}
		return last >= least && time.Since(since) >= 100*time.Millisecond
	})
	return last
}

// WaitReplicas makes an acquire wait for the lock to reach the replicas (Redis WAIT): with
// a replica it is confirmed; without one no grant is confirmed, each is given back, and the
// acquire times out rather than hold a lock a failover could lose.
func TestWaitReplicas(t *testing.T) {
	t.Parallel()
	master := redistest.Start(t, 1, "--repl-diskless-sync-delay", "0")[0]
	replica := redistest.Start(t, 1, "--replicaof", "127.0.0.1", strconv.Itoa(master.Port))[0]
	rc, mc := redistest.Client(t, replica.Addr), redistest.Client(t, master.Addr)
	waitFor(t, func() bool { // until the replica acknowledges writes: a write, then WAIT
		var acked int64
		_ = mc.Dedicated(func(dc rueidis.DedicatedClient) error {
			rs := dc.DoMulti(context.Background(), dc.B().Set().Key("probe").Value("1").Build(), dc.B().Wait().Numreplicas(1).Timeout(100).Build())
			acked, _ = rs[1].AsInt64()
			return nil
		})
		return acked == 1
	})
	alone := redistest.Start(t, 1)[0]
	key := redistest.Prefix(t) + "k"
	// With a replica, the WAIT gets seconds: an acknowledgement held up past ReplicaTimeout on
	// a loaded machine would count an unreplicated grant. Without one, every WAIT runs its
	// full timeout: a short one keeps the case short and ends within the acquire's deadline.
	for _, tc := range []struct {
		name           string
		addr           string
		unreplicated   uint64
		replicaTimeout time.Duration
		wait           time.Duration // the acquire's deadline
	}{
		{"with a replica", master.Addr, 0, 2 * time.Second, 5 * time.Second},
		{"without", alone.Addr, 1, 200 * time.Millisecond, 500 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := &env{name: "token", client: redistest.Client(t, tc.addr)}
			s := e.strategy(t, func(o *strategies.Options) {
				o.WaitReplicas, o.ReplicaTimeout = 1, tc.replicaTimeout
			})
			l, err := tryFor(s, key, "a", tc.wait)
			if tc.unreplicated == 0 {
				if err != nil {
					t.Fatalf("with a replica: %v", err)
				}
				release(t, l)
			} else if !errors.Is(err, strategies.ErrNotAcquired) {
				t.Fatalf("without a replica: want ErrNotAcquired, got %v", err)
			}
			if got := s.Stats().Unreplicated; (got == 0) != (tc.unreplicated == 0) {
				t.Fatalf("unreplicated grants: %d, want %s", got, map[bool]string{true: "0", false: "some"}[tc.unreplicated == 0])
			}
			if n, _ := redistest.Client(t, tc.addr).Do(context.Background(), rc.B().Exists().Key(key).Build()).AsInt64(); n != 0 {
				t.Fatal("an unconfirmed grant was not given back")
			}
			if n, _ := rc.Do(context.Background(), rc.B().Exists().Key(key).Build()).AsInt64(); n != 0 {
				t.Fatal("the released lock is still on the replica") // the DEL replicated too
			}
		})
	}
}
