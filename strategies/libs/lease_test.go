package libs_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/lockbench/lockbench/internal/redistest"
	"github.com/lockbench/lockbench/services/redis"
	"github.com/lockbench/lockbench/strategies"
)

// Each adapter takes a free lock, refuses it to another owner while held (redislock at
// once: its default is one attempt; the others when the acquire context ends), releases it,
// refuses a second release, and hands it to the next owner. A release after the lock was
// deleted behind the holder's back is ErrNotOwner — the oracle's lost lease.
func TestAcquireRelease(t *testing.T) {
	conn := spawn(t, "single")
	for _, name := range append(libNames, "redsync-redlock") {
		t.Run(name, func(t *testing.T) {
			c := conn
			if name == "redsync-redlock" {
				c = spawn(t, "redlock")
			}
			s := build(t, c, name, strategies.Options{Params: strategies.Params{TTL: strategies.TTLOf(5 * time.Second)}})
			// Bounded: a library that stalls fails the test instead of hanging the package.
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			key := redistest.Prefix(t) + "k"
			before := time.Now()
			l, err := s.Acquire(ctx, key, "a")
			if err != nil {
				t.Fatalf("acquire a free lock: %v", err)
			}
			took := time.Since(before)
			if l.Fence() != 0 || l.Lost() != nil && !isRueidislock(name) {
				t.Errorf("fence %d, lost %v: no library fences, and nothing watches a lease without --watchdog", l.Fence(), l.Lost())
			}
			// redsync counts the validity from before its round trips, less their time: a
			// slow acquire on a busy machine leaves less of the lease, never less than this.
			if !l.ValidUntil().After(before.Add(4*time.Second - took)) {
				t.Errorf("ValidUntil %v, %s after an acquire of %s: short for a 5s lease", l.ValidUntil(), l.ValidUntil().Sub(before), took)
			}
			short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
			_, err = s.Acquire(short, key, "b")
			cancel()
			if !errors.Is(err, strategies.ErrNotAcquired) {
				t.Fatalf("acquire a held lock: %v, want ErrNotAcquired", err)
			}
			if err := l.Release(ctx); err != nil {
				t.Fatalf("release: %v", err)
			}
			if err := l.Release(ctx); !errors.Is(err, strategies.ErrReleased) {
				t.Errorf("second release: %v, want ErrReleased", err)
			}
			l2, err := s.Acquire(ctx, key, "b")
			if err != nil {
				t.Fatalf("acquire after the release: %v", err)
			}
			wipe(t, c, name, key)
			if isRueidislock(name) {
				// The library notices when its keys' invalidation triggers a renewal that
				// finds them gone: the context it gave the holder ends.
				select {
				case <-l2.Lost():
				case <-time.After(30 * time.Second):
					t.Fatal("rueidislock did not cancel the lock's context within 30 s of its keys' deletion")
				}
			}
			if err := l2.Release(ctx); !errors.Is(err, strategies.ErrNotOwner) {
				t.Errorf("release of a deleted lock: %v, want ErrNotOwner", err)
			}
			if _, err := s.Acquire(ctx, "", "a"); err == nil {
				t.Error("acquire of an empty key succeeded")
			}
		})
	}
}

// wipe deletes a lock's keys on every server, as an expiry would.
func wipe(t *testing.T, conn *redis.Conn, name, key string) {
	t.Helper()
	keys := []string{key}
	if isRueidislock(name) {
		keys = []string{"rueidislock:0:" + key, "rueidislock:1:" + key, "rueidislock:2:" + key}
	}
	clients := conn.Nodes
	if len(clients) == 0 {
		clients = []rueidis.Client{conn.Client}
	}
	for _, c := range clients {
		if err := c.Do(context.Background(), c.B().Del().Key(keys...).Build()).Error(); err != nil {
			t.Fatal(err)
		}
	}
}

// With --watchdog, lockbench renews redsync and redislock through their own Extend and
// Refresh, passing each renewal through the BeforeRenew hook; a lease held past its first
// ttl, renewed three times, stays in Redis. Once its key is gone, the next renewal is
// refused: Lost closes, the release is ErrNotOwner. rueidislock renews by itself, and its
// renewals pass the hook too. A ttl of 2 s: a renewal held up by a busy machine for less
// than the ttl less the interval does not let the lease lapse.
func TestRenewalsPassTheHook(t *testing.T) {
	conn := spawn(t, "single")
	for _, name := range []string{"redsync", "redislock", "rueidislock"} {
		t.Run(name, func(t *testing.T) {
			var hooked atomic.Int64
			key := redistest.Prefix(t) + "k"
			o := strategies.Options{Params: strategies.Params{TTL: strategies.TTLOf(2 * time.Second), Watchdog: strategies.Watchdog{Interval: 200 * time.Millisecond}}, Hooks: strategies.Hooks{BeforeRenew: func(_ context.Context, k, owner string) {
				if k == key && owner == "a" {
					hooked.Add(1)
				}
			}}}
			s := build(t, conn, name, o)
			// Bounded: a library that stalls fails the test instead of hanging the package.
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			firstTTL := time.Now().Add(o.TTL.Duration()) // the acquire's lease lapses by then unless renewed
			l, err := s.Acquire(ctx, key, "a")
			if err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(30 * time.Second)
			for time.Now().Before(firstTTL) || s.Stats().Renewals < 3 || hooked.Load() < 3 {
				select {
				case <-l.Lost():
					t.Fatalf("lease lost while renewed (%d renewals)", s.Stats().Renewals)
				case <-time.After(20 * time.Millisecond):
				}
				if time.Now().After(deadline) {
					t.Fatalf("%d renewals, %d through the hook, in 30 s", s.Stats().Renewals, hooked.Load())
				}
			}
			short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
			if _, err := s.Acquire(short, key, "b"); !errors.Is(err, strategies.ErrNotAcquired) {
				t.Errorf("acquire by another owner of a lock renewed past its first ttl: %v", err)
			}
			cancel()
			wipe(t, conn, name, key)
			select {
			case <-l.Lost():
			case <-time.After(30 * time.Second):
				t.Fatal("Lost not closed within 30 s of the lock's keys' deletion")
			}
			if err := l.Release(ctx); !errors.Is(err, strategies.ErrNotOwner) {
				t.Errorf("release of a lost lease: %v, want ErrNotOwner", err)
			}
			if !isRueidislock(name) && s.Stats().RenewFailures != 1 {
				t.Errorf("%d renew failures, want 1", s.Stats().RenewFailures)
			}
		})
	}
}

// A renewal frozen in the hook (a process pause) lets the lease lapse in Redis: another
// owner gets the lock while the first still believes it holds it. For rueidislock this is
// what the hook on its client is for: without it, its renewals would go on through a pause.
func TestFrozenRenewalLetsTheLeaseLapse(t *testing.T) {
	conn := spawn(t, "single")
	for _, name := range []string{"redsync", "rueidislock"} {
		t.Run(name, func(t *testing.T) {
			thaw := make(chan struct{})
			o := strategies.Options{Params: strategies.Params{TTL: strategies.TTLOf(300 * time.Millisecond), Watchdog: strategies.Watchdog{Interval: 100 * time.Millisecond}}, Hooks: strategies.Hooks{BeforeRenew: func(ctx context.Context, _, owner string) {
				if owner == "a" {
					select {
					case <-thaw:
					case <-ctx.Done():
					}
				}
			}}}
			s := build(t, conn, name, o)
			key := redistest.Prefix(t) + "k"
			// Bounded: a library that stalls fails the test instead of hanging the package.
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			l, err := s.Acquire(ctx, key, "a")
			if err != nil {
				t.Fatal(err)
			}
			wait, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			l2, err := s.Acquire(wait, key, "b")
			close(thaw)
			if err != nil {
				t.Fatalf("the frozen holder's lease never lapsed: %v", err)
			}
			_ = l.Release(ctx)
			if err := l2.Release(ctx); err != nil {
				t.Errorf("release by the second holder: %v", err)
			}
		})
	}
}

// Options a library cannot honour are refused, naming the field; so is a run that did not
// say how its client was made.
func TestRefusedOptions(t *testing.T) {
	conn := spawn(t, "single")
	for _, name := range libNames {
		o := strategies.Options{Params: strategies.Params{WaitReplicas: 1}}
		backend(conn).Configure(&o)
		var oe *strategies.OptionError
		if _, err := strategies.New(name, o); !errors.As(err, &oe) || oe.Field != "wait-replicas" {
			t.Errorf("%s with --wait-replicas 1: %v, want an OptionError on wait-replicas", name, err)
		}
		if _, err := strategies.New(name, strategies.Options{Client: conn.Client}); !errors.As(err, &oe) {
			t.Errorf("%s without Options.Connect: %v, want an OptionError", name, err)
		}
	}
	var oe *strategies.OptionError
	if _, err := strategies.New("redsync-redlock", strategies.Options{Client: conn.Client, Connect: conn.ClientOption}); !errors.As(err, &oe) || oe.Field != "nodes" {
		t.Errorf("redsync-redlock without masters: %v, want an OptionError on nodes", err)
	}
}

func isRueidislock(name string) bool { return strings.HasPrefix(name, "rueidislock") }

// rueidislock's default tracking (no NOLOOP) renews a held lock in a tight loop once it has
// been renewed: its own renewal invalidates the keys its connection tracks, and the
// invalidation triggers the next renewal. Two locks held idle side by side (ttl 600ms,
// renewal every 300ms), one with the defaults and one with NoLoopTracking as rueidislock's
// README configures it: over the same window, from both renewed once until the README's has
// renewed twice more, the default's renews at least 20 times as often — a ratio within one
// window, which a busy machine slows alike. Measured: 13,868 commands in 500ms against 4
// (the library alone, on rueidis's default client options, ran about 70,000 a second).
func TestRueidislockDefaultRenewsInALoop(t *testing.T) {
	conn := spawn(t, "single")
	nodes := redis.Nodes(conn.Client)
	names := []string{"rueidislock", "rueidislock-readme"}
	var held []strategies.Strategy
	for _, name := range names {
		s := build(t, conn, name, strategies.Options{Params: strategies.Params{TTL: strategies.TTLOf(600 * time.Millisecond)}})
		// Bounded, and kept to the end: rueidislock's lease lives in the acquire's context.
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		l, err := s.Acquire(ctx, redistest.Prefix(t)+name, "a")
		if err != nil {
			t.Fatal(err)
		}
		defer func() {
			if err := l.Release(context.Background()); err != nil {
				t.Errorf("%s: release: %v", name, err)
			}
		}()
		held = append(held, s)
	}
	loop, readme := held[0], held[1]
	waitRenewals := func(s strategies.Strategy, n uint64) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); s.Stats().Renewals < n; time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%d renewals in 30 s, want %d", s.Stats().Renewals, n)
			}
		}
	}
	waitRenewals(loop, 1)
	waitRenewals(readme, 1)
	before, err := redis.Snapshot(context.Background(), nodes)
	if err != nil {
		t.Fatal(err)
	}
	loop0, readme0 := loop.Stats().Renewals, readme.Stats().Renewals
	waitRenewals(readme, readme0+2)
	loop1, readme1 := loop.Stats().Renewals, readme.Stats().Renewals
	after, err := redis.Snapshot(context.Background(), nodes)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("one window: rueidislock %d renewals, rueidislock-readme %d; %d commands in all", loop1-loop0, readme1-readme0, redis.CostBetween(before, after).Commands)
	if loop1-loop0 < 20*(readme1-readme0) {
		t.Errorf("rueidislock defaults: %d renewals in the window, with NoLoopTracking %d: want the default's renewal loop at least 20 times as often",
			loop1-loop0, readme1-readme0)
	}
}
