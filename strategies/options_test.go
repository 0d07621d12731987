package strategies_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/lockbench/lockbench/internal/redistest"
	"github.com/lockbench/lockbench/strategies"
)

func TestParseWait(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want strategies.Wait
	}{
		{"native", strategies.Wait{}},
		{"", strategies.Wait{}}, // the default is native
		{"spin", strategies.Wait{Kind: strategies.WaitSpin, Interval: time.Millisecond}},
		{"spin:0s", strategies.Wait{Kind: strategies.WaitSpin}},
		{"spin:5ms", strategies.Wait{Kind: strategies.WaitSpin, Interval: 5 * time.Millisecond}},
		{"backoff", strategies.Wait{Kind: strategies.WaitBackoff, Min: time.Millisecond, Max: 50 * time.Millisecond}},
		{"backoff:2ms..1s", strategies.Wait{Kind: strategies.WaitBackoff, Min: 2 * time.Millisecond, Max: time.Second}},
		{"pubsub", strategies.Wait{Kind: strategies.WaitPubSub}},
	} {
		got, err := strategies.ParseWait(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseWait(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
		if back, err := strategies.ParseWait(got.String()); err != nil || back != got {
			t.Errorf("ParseWait(%q.String() = %q) = %+v, %v: does not round-trip", tc.in, got.String(), back, err)
		}
	}
	for _, bad := range []string{"poll", "spin:-1ms", "spin:x", "backoff:5ms", "backoff:5ms..1ms", "backoff:0s..1ms", "pubsub:1ms", "native:1ms"} {
		_, err := strategies.ParseWait(bad)
		assertOptionError(t, err, "wait", "spin[:INTERVAL]")
	}
}

func TestParseWatchdog(t *testing.T) {
	for in, want := range map[string]strategies.Watchdog{
		"off": {}, "": {}, "auto": {Auto: true}, "3s": {Interval: 3 * time.Second},
	} {
		if got, err := strategies.ParseWatchdog(in); err != nil || got != want {
			t.Errorf("ParseWatchdog(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	if w, _ := strategies.ParseWatchdog("auto"); w.Resolve(30*time.Second) != 10*time.Second {
		t.Error("auto must renew every ttl/3 (Redisson: 30s lease, 10s renewal)")
	}
	for _, bad := range []string{"on", "0s", "-1s", "10"} {
		_, err := strategies.ParseWatchdog(bad)
		assertOptionError(t, err, "watchdog", "auto")
	}
}

func TestNewRejectsBadOptions(t *testing.T) {
	_, c := redistest.Server(t)
	three := []rueidis.Client{c, c, c}
	for _, tc := range []struct {
		name, strategy, field, mention string
		o                              strategies.Options
	}{
		{"ttl zero means default, negative is bad", "token", "ttl", "at least 1ms", strategies.Options{Client: c, Params: strategies.Params{TTL: strategies.TTLOf(-time.Second)}}},
		{"ttl below a millisecond", "token", "ttl", "want a duration of at least 1ms", strategies.Options{Client: c, Params: strategies.Params{TTL: strategies.TTLOf(time.Microsecond)}}},
		{"watchdog not below ttl", "token", "watchdog", "shorter than the ttl", strategies.Options{Client: c, Params: strategies.Params{TTL: strategies.TTLOf(time.Second), Watchdog: strategies.Watchdog{Interval: time.Second}}}},
		{"watchdog on a strategy that cannot renew", "set-nx-del", "watchdog", "token", strategies.Options{Client: c, Params: strategies.Params{Watchdog: strategies.Watchdog{Auto: true}}}},
		{"watchdog on getset", "getset", "watchdog", "cannot renew", strategies.Options{Client: c, Params: strategies.Params{Watchdog: strategies.Watchdog{Auto: true}}}},
		{"unknown wait kind", "token", "wait", "pubsub", strategies.Options{Client: c, Params: strategies.Params{Wait: strategies.Wait{Kind: 42}}}},
		{"backoff min above max", "token", "wait", "MIN <= MAX", strategies.Options{Client: c, Params: strategies.Params{Wait: strategies.Wait{Kind: strategies.WaitBackoff, Min: time.Second, Max: time.Millisecond}}}},
		{"redlock with two nodes", "redlock", "nodes", "at least 3", strategies.Options{Nodes: three[:2]}},
		{"redlock with four nodes", "redlock", "nodes", "odd number", strategies.Options{Nodes: []rueidis.Client{c, c, c, c}}},
		{"redlock drift factor", "redlock", "drift-factor", "[0, 1)", strategies.Options{Nodes: three, Params: strategies.Params{DriftFactor: 1.5}}},
		{"negative permits", "token", "permits", "at least 1", strategies.Options{Client: c, Permits: -1}},
		{"no client", "fair", "client", "needs a Redis client", strategies.Options{}},
		{"unknown strategy", "mutex", "strategy", "getset, setnx-expire", strategies.Options{Client: c}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := strategies.New(tc.strategy, tc.o)
			if err == nil {
				_ = s.Close()
			}
			assertOptionError(t, err, tc.field, tc.mention)
		})
	}
}

func assertOptionError(t *testing.T, err error, field, mention string) {
	t.Helper()
	var oe *strategies.OptionError
	if !errors.As(err, &oe) {
		t.Fatalf("want an *OptionError for %s, got %v", field, err)
	}
	if oe.Field != field {
		t.Fatalf("error names field %q, want %q: %v", oe.Field, field, err)
	}
	if !strings.Contains(err.Error(), mention) {
		t.Fatalf("error %q should mention %q", err, mention)
	}
}

// The names are part of the CLI contract: these are listed, in this order (the seeds' locks
// from the most naive to the most careful, then those beyond the seeds). A new strategy may
// come anywhere among them without this test changing; a renamed, removed or reordered one
// fails it.
func TestCatalog(t *testing.T) {
	want := []string{"getset", "setnx-expire", "setnx-stale", "set-nx-del", "get-del", "token",
		"reentrant-local", "reentrant-hash", "redisson-lock", "spin-lock", "redisson-fair", "rw-lock", "semaphore", "expirable-semaphore", "multilock",
		"redlock", "fenced", "fair"}
	names := strategies.Names()
	next := 0
	for _, n := range names {
		if next < len(want) && n == want[next] {
			next++
		}
	}
	if next < len(want) {
		t.Fatalf("Names() = %s: lacks %s, or lists it out of the order %s", strings.Join(names, ","), want[next], strings.Join(want, ","))
	}
	// get-del's check and delete are two commands: it must not claim a safe unlock.
	if i, _ := strategies.Lookup("get-del"); i.SafeUnlock || !i.KeyTTL || !i.SafeWithoutFaults || i.Source != "seeds 003, 004" {
		t.Errorf("get-del's catalog entry overstates or misstates it: %+v", i)
	}
	// Redisson's locks name the class and the release read; the seed's hash lock is not Redisson's.
	for name, class := range map[string]string{"redisson-lock": "RedissonLock.java", "spin-lock": "RedissonSpinLock.java", "redisson-fair": "RedissonFairLock.java"} {
		if i, _ := strategies.Lookup(name); !strings.Contains(i.Source, class) || !strings.Contains(i.Source, "redisson-4.7.0") || !i.Reentrant || !i.AutoRenew || !i.SafeUnlock || !i.KeyTTL {
			t.Errorf("%s's catalog entry: %+v", name, i)
		}
	}
	for name, class := range map[string]string{"rw-lock": "RedissonReadWriteLock", "semaphore": "RedissonSemaphore.java",
		"expirable-semaphore": "RedissonPermitExpirableSemaphore.java", "multilock": "RedissonMultiLock.java"} {
		if i, _ := strategies.Lookup(name); !strings.Contains(i.Source, class) || !strings.Contains(i.Source, "redisson-4.7.0") || i.Capacity == strategies.CapacityMutex {
			t.Errorf("%s's catalog entry: %+v", name, i)
		}
	}
	if i, _ := strategies.Lookup("semaphore"); i.KeyTTL || i.SafeUnlock {
		t.Errorf("RSemaphore's count has no ttl and its release no owner: %+v", i)
	}
	if i, _ := strategies.Lookup("reentrant-hash"); strings.Contains(i.Summary, "Redisson") {
		t.Errorf("reentrant-hash is seed 001's hash lock, not Redisson's RLock: %q", i.Summary)
	}
	for _, info := range strategies.Catalog() {
		if info.Summary == "" || info.Source == "" || info.Weakness == "" {
			t.Errorf("%s: catalog entry incomplete: %+v", info.Name, info)
		}
	}
}
