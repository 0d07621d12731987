package strategies_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/redistest"
	"github.com/lockbench/lockbench/strategies"
)

// The repository's two lua: examples (docs/lua.md), as the tests of this package name them.
const (
	luaToken  = "lua:../examples/token"
	luaBroken = "lua:../examples/broken"
)

// Each example loads with the properties its files give it: renew.lua makes a lock
// renewable, acquire.lua's leading comments declare its summary, safe unlock and weakness.
func TestUserLuaExamplesLoad(t *testing.T) {
	for _, tc := range []struct {
		name             string
		renews, safe     bool
		summary, weakens string
	}{
		{luaToken, true, true, "The seeds' token lock", "a hold longer than the ttl"},
		{luaBroken, false, false, "Seed 004's first lock", "deletes the next holder's lock"},
	} {
		i, err := strategies.Resolve(tc.name)
		if err != nil {
			t.Fatalf("Resolve(%s): %v", tc.name, err)
		}
		if i.Name != tc.name || i.AutoRenew != tc.renews || i.SafeUnlock != tc.safe || !i.KeyTTL ||
			i.Reentrant || i.Fencing || i.MultiNode || i.NoTTL {
			t.Errorf("%s: %+v: want renew %v, safe unlock %v, a key ttl and nothing else", tc.name, i, tc.renews, tc.safe)
		}
		if !strings.HasPrefix(i.Summary, tc.summary) || !strings.Contains(i.Weakness, tc.weakens) || !strings.Contains(i.Source, "examples/") {
			t.Errorf("%s: summary %q, weakness %q, source %q: not the declared ones", tc.name, i.Summary, i.Weakness, i.Source)
		}
		if strategies.Check(tc.name, strategies.Options{Params: strategies.Params{Watchdog: strategies.Watchdog{Auto: true}}}) == nil != tc.renews {
			t.Errorf("%s: a watchdog accepted %v, want %v (renew.lua)", tc.name, !tc.renews, tc.renews)
		}
	}
	// The examples declare token's wait, so that the same flags run them the same way.
	token, err := strategies.Resolve("token")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{luaToken, luaBroken} {
		if i, _ := strategies.Resolve(n); i.NativeWaitShort() != token.NativeWaitShort() || !strings.Contains(i.NativeWait, "-- wait: spin:0s") {
			t.Errorf("%s waits %q natively; token %q: want the same, declared by acquire.lua", n, i.NativeWait, token.NativeWait)
		}
	}
	dir := t.TempDir()
	for f, src := range map[string]string{"acquire.lua": "return 1\n", "release.lua": "return 1\n"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if i, err := strategies.Resolve("lua:" + dir); err != nil || !strings.HasPrefix(i.NativeWait, "backoff 1ms..50ms: lockbench's default") {
		t.Errorf("a lock that declares no wait: %q (%v); want lockbench's default backoff, said so", i.NativeWait, err)
	}
	for _, n := range strategies.Names() {
		if strings.HasPrefix(n, "lua:") {
			t.Errorf("%s is in the catalog; a family's variants are not", n)
		}
	}
}

// A directory lockbench cannot run is refused when its name is resolved, before anything
// connects: one line that names the file, and the line of a syntax error.
func TestUserLuaLoadErrors(t *testing.T) {
	ok := map[string]string{
		"acquire.lua": "if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then\n  return 1\nend\nreturn 0\n",
		"release.lua": "return redis.call('DEL', KEYS[1])\n",
	}
	with := func(files map[string]string) map[string]string {
		out := map[string]string{}
		for k, v := range ok {
			out[k] = v
		}
		for k, v := range files {
			if v == "-" {
				delete(out, k)
			} else {
				out[k] = v
			}
		}
		return out
	}
	for _, tc := range []struct {
		name  string
		files map[string]string // nil: no directory at all
		want  string
	}{
		{"no directory", nil, "no directory"},
		{"no acquire", with(map[string]string{"acquire.lua": "-"}), "acquire.lua: missing"},
		{"no release", with(map[string]string{"release.lua": "-"}), "release.lua: missing"},
		{"syntax", with(map[string]string{"acquire.lua": "if redis.call('GET', KEYS[1]) then\n  return 1\nend end\n"}), "acquire.lua line 3: syntax error near 'end'"},
		{"renew syntax", with(map[string]string{"renew.lua": "\n\nreturn = 1\n"}), "renew.lua line 3:"},
		{"unfinished", with(map[string]string{"release.lua": "if redis.call('GET', KEYS[1]) == ARGV[1] then\n  return 1\n"}), "release.lua: syntax error at the end of the file"},
		{"compile", with(map[string]string{"release.lua": "redis.call('DEL', KEYS[1])\nbreak\n"}), "release.lua line 2:"},
		{"empty", with(map[string]string{"acquire.lua": "-- nothing\n"}), "acquire.lua: no statement"},
		{"too large", with(map[string]string{"acquire.lua": strings.Repeat("-- padding\n", 7000) + "return 1\n"}), "acquire.lua: larger than 64 KiB"},
		{"bad wait", with(map[string]string{"acquire.lua": "-- a lock\n-- wait: sometimes\nreturn 1\n"}), "acquire.lua line 2: '-- wait: sometimes' is no wait"},
		{"native wait", with(map[string]string{"acquire.lua": "-- wait: native\nreturn 1\n"}), "acquire.lua line 1:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "lock")
			if tc.files != nil {
				if err := os.Mkdir(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				for f, src := range tc.files {
					if err := os.WriteFile(filepath.Join(dir, f), []byte(src), 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			name := "lua:" + dir
			_, err := strategies.Resolve(name)
			var oe *strategies.OptionError
			if !errors.As(err, &oe) || oe.Field != "strategy" || oe.Value != name {
				t.Fatalf("Resolve: want an OptionError on strategy %s, got %v", name, err)
			}
			if !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("Resolve: %q: want one line with %q", err, tc.want)
			}
			if _, err := strategies.New(name, strategies.Options{}); err == nil {
				t.Fatal("New built a strategy Resolve refused")
			}
		})
	}
	f := filepath.Join(t.TempDir(), "acquire.lua")
	if err := os.WriteFile(f, []byte("return 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := strategies.Resolve("lua:" + f); err == nil || !strings.Contains(err.Error(), "is not a directory") {
		t.Fatalf("a file as DIR: %v", err)
	}
	if _, err := strategies.Resolve("lua:"); err == nil || !strings.Contains(err.Error(), "lua:DIR") {
		t.Fatalf("lua: without a directory: %v", err)
	}
}

// Both examples behave as locks without faults: the conformance table, including mutual
// exclusion under every wait policy (lockbench cannot know a user lock is safe, so its Info
// does not claim it; these examples are held to it here) and, for the token example, the
// watchdog that runs its renew.lua.
func TestUserLuaConformance(t *testing.T) {
	for _, name := range []string{luaToken, luaBroken} {
		t.Run(strings.TrimPrefix(name, "lua:../examples/"), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, name)
			info, _ := strategies.Lookup(name)
			if info.AutoRenew {
				e.hold = startHold(t, e, redistest.Prefix(t)+"wd")
			}
			for _, c := range conformance {
				t.Run(c.name, func(t *testing.T) {
					if c.applies != nil && !c.applies(info) && !strings.HasPrefix(c.name, "MutualExclusion") {
						t.Skipf("%s does not claim this", name)
					}
					c.run(t, e, redistest.Prefix(t))
				})
			}
		})
	}
}

// The broken example's release is a blind DEL: a holder whose lease expired deletes the next
// holder's lock and reports success, and a third walks in beside the second. The token
// example's compare-and-delete finds the lock no longer its own and leaves it.
func TestUserLuaBrokenDeletesTheNextHoldersLock(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		deletes bool
	}{{luaBroken, true}, {luaToken, false}} {
		t.Run(strings.TrimPrefix(tc.name, "lua:../examples/"), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, tc.name)
			s := e.strategy(t, withTTL(150*time.Millisecond))
			other := e.strategy(t, withTTL(time.Minute)) // the next holder's lease outlasts the test
			key := redistest.Prefix(t) + "k"
			slow := acquire(t, s, key, "slow")
			next := acquire(t, other, key, "next") // once the slow holder's lease ran out
			err := slow.Release(context.Background())
			n, xerr := e.client.Do(context.Background(), e.client.B().Exists().Key(key).Build()).AsInt64()
			if xerr != nil {
				t.Fatal(xerr)
			}
			if tc.deletes {
				if err != nil || n != 0 {
					t.Fatalf("blind DEL: release %v, lock exists %d; want nil and the next holder's lock gone", err, n)
				}
				release(t, acquireFree(t, s, key, "third")) // walks in while "next" is inside
			} else {
				if !errors.Is(err, strategies.ErrNotOwner) || n != 1 {
					t.Fatalf("compare-and-delete: release %v, lock exists %d; want ErrNotOwner and the lock kept", err, n)
				}
				mustBeBusy(t, s, key, "third")
			}
			_ = next.Release(context.Background())
		})
	}
}

// A script whose answer the contract does not know, or that fails in Redis, is an error
// naming its file; -PTTL reads as held; a release answering 0 is ErrNotOwner.
func TestUserLuaContract(t *testing.T) {
	t.Parallel()
	write := func(t *testing.T, files map[string]string) string {
		dir := t.TempDir()
		for f, src := range files {
			if err := os.WriteFile(filepath.Join(dir, f), []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return "lua:" + dir
	}
	const release = "return redis.call('DEL', KEYS[1])\n"
	for _, tc := range []struct {
		name, acquire, want string
	}{
		{"two", "return 2\n", "acquire.lua returned 2; valid: 1 (granted), 0 or -PTTL"},
		{"string", "return 'OK'\n", "acquire.lua returned"},
		{"nil", "redis.call('GET', KEYS[1])\n", "acquire.lua returned nil"},
		{"redis error", "return redis.call('NOSUCHCOMMAND', KEYS[1])\n", "acquire.lua: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			name := write(t, map[string]string{"acquire.lua": tc.acquire, "release.lua": release})
			e := newEnv(t, name)
			s := e.strategy(t, nil)
			_, err := tryFor(s, redistest.Prefix(t)+"k", "a", patience)
			if err == nil || errors.Is(err, strategies.ErrNotAcquired) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Acquire: %v; want an error with %q", err, tc.want)
			}
		})
	}
	t.Run("pttl and not the owner", func(t *testing.T) {
		t.Parallel()
		name := write(t, map[string]string{
			"acquire.lua": "if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end\nlocal ms = redis.call('PTTL', KEYS[1]); if ms > 0 then return -ms end; return 0\n",
			"release.lua": "return 0\n",
		})
		e := newEnv(t, name)
		s := e.strategy(t, withTTL(time.Minute))
		key := redistest.Prefix(t) + "k"
		l := acquireFree(t, s, key, "a")
		mustBeBusy(t, s, key, "b")
		if err := l.Release(context.Background()); !errors.Is(err, strategies.ErrNotOwner) {
			t.Fatalf("release answering 0: want ErrNotOwner, got %v", err)
		}
	})
}

// BenchmarkUserLuaAcquireRelease is BenchmarkAcquireRelease for the token example beside the
// built-in token it copies, on one server: what running the lock as scripts of one's own
// costs the client (allocs/op) and the throughput of many uncontended workers (ns/op; noisy
// on a shared machine). 64 goroutines per CPU keep rueidis's pipeline as full as a run of
// hundreds of workers over many keys does.
func BenchmarkUserLuaAcquireRelease(b *testing.B) {
	o := newBenchEnv(b, "token")
	for _, name := range []string{"token", luaToken} {
		b.Run(strings.Replace(name, "lua:../examples/", "lua-", 1), func(b *testing.B) {
			s, err := strategies.New(name, o)
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			prefix := "bench:" + name + ":"
			keys := make([]string, 4096)
			for i := range keys {
				keys[i] = prefix + strconv.Itoa(i)
			}
			ctx := context.Background()
			b.ReportAllocs()
			b.SetParallelism(64)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				owner := "bench-" + strconv.Itoa(int(nextWorker.Add(1)))
				i := int(nextWorker.Load()) * 997
				for pb.Next() {
					i++
					l, err := s.Acquire(ctx, keys[i%len(keys)], owner)
					if err != nil {
						b.Error(err)
						return
					}
					if err := l.Release(ctx); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
