package workload

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/redistest"
)

// The end of a phase lets the acquires in flight finish: it does not cut setnx-expire
// between its SETNX and its EXPIRE, the crash only a fault may make. Twenty short phases,
// each ending with workers mid-acquire on every key, leave no key stuck.
func TestPhaseEndDoesNotCutAnAcquireInHalf(t *testing.T) {
	// Not parallel: its windows are 150ms of spinning workers, and beside the other tests
	// on a busy machine a window could pass without an acquire to show for it.
	_, c := redistest.Server(t)
	cfg := shortConfig()
	cfg.Workers, cfg.Keys, cfg.Duration = 20, 5, 150*time.Millisecond
	cfg.AcquireTimeout = time.Second
	if err := cfg.Wait.Set("spin:100us"); err != nil { // keep SETNXes in flight at every moment
		t.Fatal(err)
	}
	for range 20 {
		cfg.Phases = append(cfg.Phases, cfg.Phase("setnx-expire"))
	}
	results, err := Run(context.Background(), cfg, redisBackend(c), Options{})
	if err != nil {
		t.Fatal(err)
	}
	stuck := 0
	for i, r := range results {
		if r.Acquired == 0 {
			t.Errorf("phase %d acquired nothing: %v", i+1, r.Notes)
		}
		if r.Safety.StuckKeys > 0 {
			stuck++
			t.Logf("phase %d: %d keys stuck, verdict %q", i+1, r.Safety.StuckKeys, r.Verdict)
		}
	}
	if stuck > 0 {
		t.Errorf("%d of %d phases without a fault left keys without a ttl", stuck, len(results))
	}
}

// A phase that acquired nothing says why: here every acquire timed out on a lock someone
// else holds, while Redis idled. A phase that acquired says nothing of the kind.
func TestNothingAcquiredSaysWhy(t *testing.T) {
	_, c := redistest.Server(t)
	cfg := shortConfig("token", "token")
	cfg.Workers, cfg.Duration, cfg.KeyPrefix = 4, 500*time.Millisecond, "held:"
	cfg.AcquireTimeout = 20 * time.Millisecond
	if err := cfg.Wait.Set("spin:1ms"); err != nil { // backoff's 50ms would starve the second phase
		t.Fatal(err)
	}
	// The first phase's only key, held by someone else for longer than the test (with a
	// ttl: it is held, not stuck).
	if err := c.Do(context.Background(), c.B().Set().Key("held:1:token:{0}").Value("someone").Px(time.Minute).Build()).Error(); err != nil {
		t.Fatal(err)
	}
	results, err := Run(context.Background(), cfg, redisBackend(c), Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := results[0]
	if r.Acquired != 0 || r.Timeouts == 0 || r.Safety.StuckKeys != 0 {
		t.Fatalf("on a held key: acquired %d, timeouts %d, stuck %d; want only timeouts", r.Acquired, r.Timeouts, r.Safety.StuckKeys)
	}
	want := fmt.Sprintf("nothing acquired: every acquire timed out (%d timeouts after 20ms, 0 errors); Redis meanwhile: ", r.Timeouts)
	i := slices.IndexFunc(r.Notes, func(n string) bool { return strings.HasPrefix(n, want) })
	if i < 0 {
		t.Fatalf("no note starting %q in %q", want, r.Notes)
	}
	if n := r.Notes[i]; !strings.Contains(n, "% CPU of one core, ") || !strings.HasSuffix(n, " commands/s") {
		t.Errorf("the note does not give the server's CPU and commands per second: %q", n)
	}
	t.Log(r.Notes[i])
	if r := results[1]; r.Acquired == 0 || slices.ContainsFunc(r.Notes, func(n string) bool { return strings.HasPrefix(n, "nothing acquired") }) {
		t.Errorf("a phase that acquired %d says %q", r.Acquired, r.Notes)
	}
}

// An acquire sleeping in its wait policy's pause when the phase ends stops waiting then,
// for each policy's loop (spin, pubsub, fair's queue, Redisson's latch): the drain does not
// wait out the sleep until its grace cancels the acquire. Here every worker waits on a key
// held by someone else, with pauses and an acquire timeout far longer than the grace.
func TestPhaseEndEndsTheWaits(t *testing.T) {
	_, c := redistest.Server(t)
	for _, tc := range []struct{ strategy, wait string }{
		{"token", "spin:1m"}, {"token", "pubsub"}, {"fair", "spin:1m"}, {"redisson-lock", "native"},
	} {
		t.Run(tc.strategy+" "+tc.wait, func(t *testing.T) {
			cfg := shortConfig(tc.strategy)
			cfg.Workers, cfg.Keys, cfg.Duration = 4, 1, 200*time.Millisecond
			cfg.AcquireTimeout, cfg.KeyPrefix = time.Minute, fmt.Sprintf("ends%d:", time.Now().UnixNano())
			if err := cfg.Wait.Set(tc.wait); err != nil {
				t.Fatal(err)
			}
			// The phase's only key, held by someone else for longer than the test (with a
			// ttl: held, not stuck); Redisson's lock is a hash.
			key := cfg.KeyPrefix + "1:" + tc.strategy + ":{0}"
			set := c.B().Set().Key(key).Value("someone").Px(time.Minute).Build()
			if tc.strategy == "redisson-lock" {
				set = c.B().Eval().Script("redis.call('hset', KEYS[1], 'someone', 1); return redis.call('pexpire', KEYS[1], 60000)").Numkeys(1).Key(key).Build()
			}
			if err := c.Do(context.Background(), set).Error(); err != nil {
				t.Fatal(err)
			}
			cut := 0
			results, err := Run(context.Background(), cfg, redisBackend(c), Options{drainCut: func() { cut++ }})
			if err != nil {
				t.Fatal(err)
			}
			if r := results[0]; r.Acquired != 0 {
				t.Fatalf("acquired %d of a key someone else holds", r.Acquired)
			}
			if cut > 0 {
				t.Errorf("the drain waited out its grace and cancelled the acquires sleeping in their waits")
			}
		})
	}
}
