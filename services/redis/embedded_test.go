package redis_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/lockbench/lockbench/services/redis"
	"github.com/lockbench/lockbench/strategies"
)

func openEmbedded(t *testing.T, topology string) *redis.Conn {
	t.Helper()
	c, err := redis.OpenEmbedded(context.Background(), topology)
	if err != nil {
		t.Fatalf("embedded %s: %v", topology, err)
	}
	t.Cleanup(c.Close)
	return c
}

// TestEmbeddedWithoutRedisServer: with no --redis, no `target up` and no redis-server on
// PATH, Open embeds miniredis and says so; it refuses what miniredis cannot do.
func TestEmbeddedWithoutRedisServer(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // not parallel: no other test runs while PATH is empty
	state := filepath.Join(t.TempDir(), "none.json")
	for _, topo := range []string{"", redis.Redlock} {
		c, err := redis.Open(context.Background(), redis.Spec{Topology: topo, StatePath: state})
		if err != nil {
			t.Fatalf("Open %q: %v", topo, err)
		}
		want := map[string]int{"": 1, redis.Redlock: 5}[topo]
		if c.Mode != "embedded" || len(c.Addrs) != want || c.Note != redis.EmbeddedNote || !strings.HasPrefix(c.RedisVersion, "miniredis ") {
			t.Fatalf("Open %q: mode %s, addrs %v, note %q, version %q", topo, c.Mode, c.Addrs, c.Note, c.RedisVersion)
		}
		setGet(t, c.Client, "k")
		c.Close()
	}
	for _, topo := range []string{redis.Sentinel, redis.Cluster} {
		_, err := redis.Open(context.Background(), redis.Spec{Topology: topo, StatePath: state})
		var se *redis.SpecError
		if !errors.As(err, &se) || se.Field != "topology" || !strings.Contains(err.Error(), "apt-get install redis-server") {
			t.Fatalf("embedded %s: want a *SpecError with the install hint, got %v", topo, err)
		}
	}
	if _, err := redis.Up(context.Background(), redis.Single, state); !errors.Is(err, redis.ErrNoRedisServer) {
		t.Fatalf("Up without redis-server: %v", err)
	}
}

// TestEmbeddedStrategies: every strategy, with every wait policy, works on miniredis:
// acquire, a second owner waits, release, the waiter gets the lock.
func TestEmbeddedStrategies(t *testing.T) {
	t.Parallel()
	single, redlock := openEmbedded(t, redis.Single), openEmbedded(t, redis.Redlock)
	for _, name := range strategies.Names() {
		for _, wait := range []string{"spin", "backoff", "pubsub"} {
			t.Run(name+"/"+wait, func(t *testing.T) {
				t.Parallel()
				conn := single
				if info, _ := strategies.Lookup(name); info.MultiNode {
					conn = redlock
				}
				if info, _ := strategies.Lookup(name); info.Applies != nil && !slices.Contains(info.Applies, "wait") && wait != "backoff" {
					t.Skipf("%s waits its own way (--wait does not apply)", name)
				}
				w, err := strategies.ParseWait(wait)
				if err != nil {
					t.Fatal(err)
				}
				s, err := strategies.New(name, strategies.Options{Client: conn.Client, Nodes: conn.Nodes, Params: strategies.Params{Wait: w}})
				if err != nil {
					t.Fatalf("New: %v", err)
				}
				defer s.Close()
				key := "{" + t.Name() + "}"
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()

				a, err := s.Acquire(ctx, key, "a")
				if err != nil {
					t.Fatalf("acquire by a: %v", err)
				}
				// With pubsub, b waits in another process (another Strategy on its own
				// subscription), so that the release's turn message must reach it: in one
				// process the release hands the lock over in its script, with no message.
				sb := s
				if wait == "pubsub" {
					if sb, err = strategies.New(name, strategies.Options{Client: conn.Client, Nodes: conn.Nodes, Params: strategies.Params{Wait: w}}); err != nil {
						t.Fatalf("New: %v", err)
					}
					defer sb.Close()
				}
				got := make(chan error, 1)
				var b strategies.Lease
				go func() {
					var err error
					b, err = sb.Acquire(ctx, key, "b")
					got <- err
				}()
				if wait == "pubsub" {
					// b's subscription must be confirmed before a releases: a release that
					// comes while b is still subscribing is found by b's next attempt, with no
					// message (seen at load 30: "1 subscriptions, 0 notifications").
					awaitSubscribed(t, sb, got)
				} else {
					select {
					case err := <-got:
						t.Fatalf("b acquired a held lock (err %v)", err)
					case <-time.After(150 * time.Millisecond):
					}
				}
				released := time.Now()
				if err := a.Release(ctx); err != nil {
					t.Fatalf("release by a: %v", err)
				}
				if err := <-got; err != nil {
					t.Fatalf("b after a released: %v", err)
				}
				t.Logf("handoff %s", time.Since(released).Round(time.Microsecond))
				if err := b.Release(ctx); err != nil {
					t.Fatalf("release by b: %v", err)
				}
				// The release reached b's process on the channel it subscribed to (its ttl of
				// 10 s is the acquire's whole deadline: without the message b would not have
				// the lock).
				if wait == "pubsub" {
					st := sb.Stats()
					for deadline := time.Now().Add(10 * time.Second); st.Notifications == 0 && time.Now().Before(deadline); st = sb.Stats() {
						time.Sleep(5 * time.Millisecond)
					}
					if st.Subscriptions == 0 || st.Notifications == 0 {
						t.Fatalf("pubsub wait: %d subscriptions, %d notifications; want both > 0", st.Subscriptions, st.Notifications)
					}
				}
			})
		}
	}
}

// TestEmbeddedCommands: the commands lockbench sends beyond the strategies, and keys that
// expire in real time.
func TestEmbeddedCommands(t *testing.T) {
	t.Parallel()
	c := openEmbedded(t, redis.Single).Client
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b := c.B()
	must := func(r rueidis.RedisResult) rueidis.RedisResult {
		t.Helper()
		if err := r.Error(); err != nil && !rueidis.IsRedisNil(err) {
			t.Fatal(err)
		}
		return r
	}

	// Expiry in real time: SET PX, PEXPIRE, and a hash with PEXPIRE, as the locks use them.
	// The keys go once their 200ms have passed, and not before: the PTTL counts down on
	// the clock, not on the commands, whose count is no measure of time here.
	set := time.Now()
	must(c.Do(ctx, b.Set().Key("px").Value("1").Nx().PxMilliseconds(200).Build()))
	setDone := time.Now() // px's ttl began between set and setDone
	must(c.Do(ctx, b.Set().Key("pexpire").Value("1").Build()))
	must(c.Do(ctx, b.Pexpire().Key("pexpire").Milliseconds(200).Build()))
	must(c.Do(ctx, b.Hincrby().Key("hash").Field("owner").Increment(1).Build()))
	must(c.Do(ctx, b.Pexpire().Key("hash").Milliseconds(200).Build()))
	if ms, _ := must(c.Do(ctx, b.Pttl().Key("px").Build())).AsInt64(); ms <= 0 || ms > 200 {
		t.Fatalf("PTTL = %d, want (0, 200]", ms)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		// Read the clock before the command: px has at most 200ms less this left.
		elapsed := time.Since(setDone)
		ms, _ := must(c.Do(ctx, b.Pttl().Key("px").Build())).AsInt64()
		n, _ := must(c.Do(ctx, b.Exists().Key("px", "pexpire", "hash").Build())).AsInt64()
		if ms > 0 && ms > (200*time.Millisecond-elapsed).Milliseconds()+1 {
			t.Fatalf("PTTL %dms, %s after a 200ms ttl was set: the ttl does not run on the clock", ms, elapsed)
		}
		if n == 0 {
			if gone := time.Since(set); gone < 200*time.Millisecond {
				t.Fatalf("the keys expired %s after their 200ms ttl was set", gone)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of 3 keys still exist 10s after a 200ms ttl", n)
		}
	}

	// The naive strategies' commands.
	if ok, _ := must(c.Do(ctx, b.Setnx().Key("nx").Value("1").Build())).AsBool(); !ok {
		t.Fatal("SETNX on a free key failed")
	}
	if old, _ := must(c.Do(ctx, b.Getset().Key("nx").Value("2").Build())).ToString(); old != "1" {
		t.Fatalf("GETSET returned %q", old)
	}
	// The engine's cleanup: SCAN MATCH, UNLINK, DBSIZE.
	for _, k := range []string{"p:1", "p:2", "q:1"} {
		must(c.Do(ctx, b.Set().Key(k).Value("x").Build()))
	}
	e, err := c.Do(ctx, b.Scan().Cursor(0).Match("p:*").Count(1000).Build()).AsScanEntry()
	if err != nil || len(e.Elements) != 2 {
		t.Fatalf("SCAN MATCH p:* = %v, %v", e.Elements, err)
	}
	for _, k := range e.Elements {
		must(c.Do(ctx, b.Unlink().Key(k).Build()))
	}
	if n, _ := must(c.Do(ctx, b.Dbsize().Build())).AsInt64(); n != 2 { // nx and q:1
		t.Fatalf("DBSIZE = %d, want 2", n)
	}

	// PUBLISH to a subscriber on a dedicated connection (the pubsub wait policy).
	dc, free := c.Dedicate()
	defer free()
	msgs := make(chan string, 1)
	dc.SetPubSubHooks(rueidis.PubSubHooks{OnMessage: func(m rueidis.PubSubMessage) { msgs <- m.Message }})
	if err := dc.Do(ctx, dc.B().Subscribe().Channel("ch").Build()).Error(); err != nil {
		t.Fatalf("SUBSCRIBE: %v", err)
	}
	deadline := time.Now().Add(2 * time.Second)
	for n := int64(0); n == 0 && time.Now().Before(deadline); {
		n, _ = must(c.Do(ctx, b.Publish().Channel("ch").Message("hi").Build())).AsInt64()
	}
	select {
	case m := <-msgs:
		if m != "hi" {
			t.Fatalf("message %q", m)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("no message")
	}
	// The shared connection still works after a subscription (AlwaysRESP2).
	must(c.Do(ctx, b.Get().Key("nx").Build()))

	// INFO: miniredis has no counters; ReadStats says so instead of returning zeros, and
	// Snapshot returns at once.
	nodes := redis.Nodes(c)
	if len(nodes) != 1 {
		t.Fatalf("Nodes = %v", nodes)
	}
	start := time.Now()
	if _, err := redis.Snapshot(ctx, nodes); err == nil {
		t.Fatal("Snapshot of miniredis: want an error (no counters), got none")
	} else {
		t.Logf("Snapshot on miniredis: %v", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("Snapshot took %s", d)
	}
}

// awaitSubscribed waits until s, acquiring a held lock on its own goroutine (got receives
// the outcome), counts a failed attempt. Under the pubsub wait that count comes after the
// SUBSCRIBE was confirmed (and, for a turn channel, after its process joined the lock's
// waiting processes), before the attempt that follows it: from then on every release is
// announced to b's subscription, whether b's next attempt still finds the lock taken or not.
// It fails the test if the acquire returns meanwhile (the lock is held), and after a
// generous bound for a starved machine.
func awaitSubscribed(t *testing.T, s strategies.Strategy, got <-chan error) {
	t.Helper()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	giveUp := time.After(5 * time.Second)
	for s.Stats().FailedAttempts == 0 {
		select {
		case err := <-got:
			t.Fatalf("b acquired a held lock (err %v)", err)
		case <-giveUp:
			t.Fatalf("b has not subscribed to wait for the held lock after 5s: %+v", s.Stats())
		case <-tick.C:
		}
	}
}
