package workload

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/redistest"
	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/strategies"
)

// killEvery is a test fault: every nth holder dies in its critical section, and a dead
// owner's renewals stop, as holder-crash does it.
type killEvery struct {
	n    uint64
	seen atomic.Uint64
	dead sync.Map // owner -> struct{}
}

func (k *killEvery) Hooks() strategies.Hooks {
	return strategies.Hooks{BeforeRenew: func(ctx context.Context, _, owner string) {
		if _, ok := k.dead.Load(owner); ok {
			<-ctx.Done()
		}
	}}
}
func (k *killEvery) WorkerContext(ctx context.Context, _ int) context.Context   { return ctx }
func (k *killEvery) Stall(context.Context, int, string)                         {}
func (k *killEvery) StallWrite(context.Context, int, string)                    {}
func (k *killEvery) Run(ctx context.Context, _ time.Time, _ func(report.Event)) { <-ctx.Done() }
func (k *killEvery) Crash(_ int, owner string) bool {
	if k.seen.Add(1)%k.n != 0 {
		return false
	}
	k.dead.Store(owner, struct{}{})
	return true
}

// A dead holder's key is blocked until its lease runs out, also with a watchdog: its
// renewals died with it. The worker comes back as a new owner: a reentrant strategy would
// otherwise let it re-enter its own dead lock at once, and its keys would never look
// blocked. Every dead lease is given up after the phase, and nothing is left in Redis.
func TestDeadHoldersBlockTheirKeysForALease(t *testing.T) {
	t.Parallel()
	_, c := redistest.Server(t)
	const ttl = time.Second
	cfg := shortConfig("token", "reentrant-hash")
	cfg.Keys, cfg.Workers, cfg.Duration, cfg.TTL = 2, 8, 4*ttl, strategies.TTLOf(ttl)
	cfg.Watchdog = strategies.Watchdog{Auto: true}
	cfg.AcquireTimeout = ttl / 2
	if err := cfg.Hold.Set("2ms"); err != nil {
		t.Fatal(err)
	}
	cfg.Faults = []string{"kill-every"}
	results, err := Run(context.Background(), cfg, redisBackend(c), Options{
		Faults: func(Phase) (Faults, error) { return &killEvery{n: 25}, nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		b := r.Safety.BlockedAfterCrash
		if r.Safety.CrashedHolders == 0 || b == nil || b.Recovered == 0 {
			t.Fatalf("%s: %d crashed, blocked %+v; want dead holders whose keys came back", r.Strategy, r.Safety.CrashedHolders, b)
		}
		// The watchdog renews every ttl/3: a dead holder's lease runs out between 2/3 of a
		// ttl and a ttl after its death. A loaded machine may add to it, now and then by
		// more than a ttl (max 2046ms was seen): the median judges it. Leases renewed on
		// after their holder died would never have come back (Recovered, above).
		if lo, hi := (ttl / 2).Milliseconds(), (2 * ttl).Milliseconds(); b.P50 < lo || b.P50 > hi {
			t.Errorf("%s: blocked after a crash p50 %d ms, max %d ms; want a p50 within %d..%d ms of a %v lease", r.Strategy, b.P50, b.Max, lo, hi, ttl)
		}
		if r.LatencyUS.Release.Count >= r.Acquired {
			t.Errorf("%s: %d releases of %d acquires; the dead holders released nothing", r.Strategy, r.LatencyUS.Release.Count, r.Acquired)
		}
		if r.Safety.Overlaps != 0 || r.Verdict != report.VerdictSafe {
			t.Errorf("%s: verdict %q; a dead holder's lease keeps others out until it lapses", r.Strategy, r.Verdict)
		}
	}
	if n, _ := c.Do(context.Background(), c.B().Dbsize().Build()).AsInt64(); n != 0 {
		t.Errorf("%d keys left after the phases", n)
	}
}

// A holder that dies holding a lock without a ttl (setnx-expire --ttl 0, seed 003's first
// lock) keeps its key from everyone for good: the key is stuck and the verdict says
// DEADLOCK, where the same lock with a ttl recovers.
func TestDeadHolderOfALockWithoutTTLIsADeadlock(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		ttl      strategies.TTL
		deadlock bool
	}{{"no ttl", strategies.NoTTL, true}, {"ttl 1s", strategies.TTLOf(time.Second), false}} {
		t.Run(tc.name, func(t *testing.T) { // each waits out its phase: side by side
			t.Parallel()
			deadHolderWithTTL(t, tc.ttl, tc.deadlock)
		})
	}
}

// deadHolderWithTTL runs setnx-expire with ttl while every 25th holder dies.
func deadHolderWithTTL(t *testing.T, ttl strategies.TTL, wantDeadlock bool) {
	_, c := redistest.Server(t)
	cfg := shortConfig("setnx-expire")
	cfg.Keys, cfg.Workers, cfg.Duration, cfg.TTL = 2, 4, 3*time.Second, ttl
	cfg.AcquireTimeout = 500 * time.Millisecond
	cfg.Faults = []string{"kill-every"}
	results, err := Run(context.Background(), cfg, redisBackend(c), Options{
		Faults: func(Phase) (Faults, error) { return &killEvery{n: 25}, nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	r := results[0]
	b := r.Safety.BlockedAfterCrash
	if r.Safety.CrashedHolders == 0 || b == nil {
		t.Fatalf("ttl %v: %d crashed, blocked %+v; want dead holders", ttl, r.Safety.CrashedHolders, b)
	}
	deadlock := strings.HasPrefix(r.Verdict, report.VerdictDeadlock)
	if wantDeadlock && (!deadlock || r.Safety.StuckKeys == 0 || b.Recovered != 0) {
		t.Errorf("no ttl: verdict %q, %d stuck keys, %d keys recovered; want DEADLOCK, stuck keys and none back", r.Verdict, r.Safety.StuckKeys, b.Recovered)
	}
	if !wantDeadlock && (deadlock || r.Safety.StuckKeys != 0) {
		t.Errorf("ttl %v: verdict %q, %d stuck keys; a lease that lapses frees the key", ttl, r.Verdict, r.Safety.StuckKeys)
	}
}
