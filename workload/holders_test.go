package workload

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/redistest"
	"github.com/lockbench/lockbench/strategies"
)

// enterN puts n holders into k as readers (read) or writers and returns how many entries
// overlapped and who was inside after the last.
func enterN(k *keyState, c capacity, read bool, n int) (overlaps int, in inside) {
	for range n {
		o, _, i := k.enterAs(c, read)
		if o {
			overlaps++
		}
		in = i
	}
	return overlaps, in
}

// A semaphore of 3 admits 3 holders at once; the 4th is past its capacity.
func TestOracleSemaphoreCapacity(t *testing.T) {
	c := capacity{semaphore: true, permits: 3}
	var k keyState
	if o, in := enterN(&k, c, false, 3); o != 0 || in.holders != 3 {
		t.Fatalf("3 holders in a semaphore of 3: %d overlaps, %d inside; want 0, 3", o, in.holders)
	}
	if o, in := enterN(&k, c, false, 1); o != 1 || in.holders != 4 {
		t.Fatalf("a 4th holder: %d overlaps, %d inside; want 1, 4", o, in.holders)
	}
	for range 4 {
		k.exitAs(c, false, 0)
	}
	if o, _ := enterN(&k, c, false, 3); o != 0 {
		t.Errorf("after all left, 3 holders again: %d overlaps, want 0", o)
	}
	// Semaphore holders share the key: none supersedes another.
	if _, e, _ := k.enterAs(c, false); k.superseded(e) || k.successorInside(e) {
		t.Error("a semaphore holder counts as superseded by the others inside")
	}
}

// A rw-lock: readers together are fine; a reader beside a writer and two writers overlap.
func TestOracleRWCapacity(t *testing.T) {
	c := capacity{rw: true}
	t.Run("readers together", func(t *testing.T) {
		var k keyState
		if o, in := enterN(&k, c, true, 5); o != 0 || in.readers != 5 || in.writers != 0 || in.holders != 5 {
			t.Fatalf("5 readers: %d overlaps, inside %+v", o, in)
		}
	})
	t.Run("reader then writer", func(t *testing.T) {
		var k keyState
		enterN(&k, c, true, 2)
		if o, in := enterN(&k, c, false, 1); o != 1 || in.readers != 2 || in.writers != 1 || in.holders != 3 {
			t.Fatalf("a writer beside 2 readers: %d overlaps, inside %+v; want 1", o, in)
		}
	})
	t.Run("writer then reader", func(t *testing.T) {
		var k keyState
		_, w, _ := k.enterAs(c, false)
		if o, _ := enterN(&k, c, true, 1); o != 1 {
			t.Fatalf("a reader beside a writer: %d overlaps, want 1", o)
		}
		k.exitAs(c, true, 0)
		k.exitAs(c, false, w)
		if o, _ := enterN(&k, c, true, 3); o != 0 {
			t.Errorf("readers after the writer left: %d overlaps, want 0", o)
		}
	})
	t.Run("two writers", func(t *testing.T) {
		var k keyState
		_, a, _ := k.enterAs(c, false)
		o, b, in := k.enterAs(c, false)
		if !o || in.writers != 2 {
			t.Fatalf("a second writer: overlap %v, inside %+v", o, in)
		}
		if !k.superseded(a) || k.superseded(b) {
			t.Error("the first writer is not superseded by the second")
		}
	})
	t.Run("readers do not supersede a writer", func(t *testing.T) {
		var k keyState
		_, w, _ := k.enterAs(c, false)
		k.exitAs(c, false, w)
		_, r, _ := k.enterAs(c, true)
		if k.superseded(w) || r != w {
			t.Errorf("a reader after writer %d took entry %d and superseded it: %v", w, r, k.superseded(w))
		}
		k.exitAs(c, true, r)
		if k.holders.Load() != 0 {
			t.Errorf("%d holders left inside", k.holders.Load())
		}
	})
}

// A lock set's keys are each a mutex: every key of a set is counted, and two sets that
// share one key overlap there only.
func TestOracleSetCountsEveryKey(t *testing.T) {
	ks := make([]keyState, 4)
	c := capacity{}
	enterSet := func(keys ...int) (overlaps int) {
		for _, k := range keys {
			if o, _, _ := ks[k].enterAs(c, false); o {
				overlaps++
			}
		}
		return overlaps
	}
	if o := enterSet(0, 1, 2); o != 0 {
		t.Fatalf("one set: %d overlaps", o)
	}
	if o := enterSet(3, 2); o != 1 {
		t.Fatalf("a second set sharing key 2: %d overlaps, want 1", o)
	}
	for k, want := range []int32{1, 1, 2, 1} {
		if got := ks[k].holders.Load(); got != want {
			t.Errorf("key %d: %d holders, want %d", k, got, want)
		}
	}
}

// requireRegistered fails a test whose strategy is not registered: a renamed or removed
// strategy must break the tests that measure it, not let them pass by skipping.
func requireRegistered(t *testing.T, name string) {
	t.Helper()
	if _, ok := strategies.Lookup(name); !ok {
		t.Fatalf("strategy %s is not registered: %s", name, strings.Join(strategies.Names(), ", "))
	}
}

func holdersConfig(strategy string, workers, keys int) Config {
	cfg := shortConfig(strategy)
	cfg.Workers, cfg.Keys = workers, keys
	cfg.Duration = 2 * time.Second
	cfg.AcquireTimeout = 10 * time.Second // a busy machine must not turn waits into timeouts
	_ = cfg.Hold.Set("2ms")
	return cfg
}

// A semaphore of 3 permits lets 3 of 30 workers hold one key together, never a 4th.
func TestSemaphoreHoldsPermits(t *testing.T) {
	t.Parallel()
	requireRegistered(t, "semaphore")
	_, c := redistest.Server(t)
	cfg := holdersConfig("semaphore", 30, 1)
	cfg.Permits = 3
	results, err := Run(context.Background(), cfg, redisBackend(c), Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := results[0]
	t.Logf("semaphore permits 3: %d acquired, max holders %d, overlaps %d, %.1f commands/acquire, verdict %q",
		r.Acquired, r.Safety.MaxHolders, r.Safety.Overlaps, r.Redis.CommandsPerAcquire, r.Verdict)
	if r.Acquired == 0 || r.Safety.Overlaps != 0 || r.Safety.Misdeletes != 0 || r.Safety.MaxHolders != 3 {
		t.Errorf("acquired %d, overlaps %d, misdeletes %d, max holders %d; want some, 0, 0, 3",
			r.Acquired, r.Safety.Overlaps, r.Safety.Misdeletes, r.Safety.MaxHolders)
	}
	if r.Verdict != "safe" || r.Capacity != strategies.CapacitySemaphore || r.Permits != 3 {
		t.Errorf("verdict %q, capacity %q, permits %d", r.Verdict, r.Capacity, r.Permits)
	}
}

// Holders that die inside a semaphore keep their permits for good: leaked, a deadlock. The
// expirable semaphore's permits come back when their lease runs out: none leaked.
func TestSemaphoreLeaksDeadHoldersPermits(t *testing.T) {
	t.Parallel()
	requireRegistered(t, "semaphore")
	requireRegistered(t, "expirable-semaphore")
	for _, tt := range []struct {
		strategy string
		leaks    bool
	}{{"semaphore", true}, {"expirable-semaphore", false}} {
		t.Run(tt.strategy, func(t *testing.T) {
			t.Parallel() // a server each: the phases wait side by side
			_, c := redistest.Server(t)
			cfg := holdersConfig(tt.strategy, 30, 1)
			cfg.Permits = 3
			cfg.TTL = strategies.TTLOf(time.Second) // the expirable one's lease: dead holders' permits return after it
			cfg.Faults = []string{"kill-every"}     // holder-crash:p=0.05 without its randomness: every 20th holder dies
			results, err := Run(context.Background(), cfg, redisBackend(c), Options{
				Faults: func(Phase) (Faults, error) { return &killEvery{n: 20}, nil },
			})
			if err != nil {
				t.Fatal(err)
			}
			r := results[0]
			t.Logf("%s: %d acquired, %d holders died, %d permits leaked, max holders %d, verdict %q, notes %q",
				tt.strategy, r.Acquired, r.Safety.CrashedHolders, r.Safety.LeakedPermits, r.Safety.MaxHolders, r.Verdict, r.Notes)
			if r.Safety.CrashedHolders == 0 {
				t.Fatal("no holder died: the fault did not fire")
			}
			if r.Safety.Overlaps != 0 || r.Safety.MaxHolders > 3 {
				t.Errorf("overlaps %d, max holders %d in a semaphore of 3", r.Safety.Overlaps, r.Safety.MaxHolders)
			}
			if r.Safety.LeakedPermits > 3 {
				t.Errorf("%d permits leaked of 3", r.Safety.LeakedPermits)
			}
			deadlock := strings.Contains(r.Verdict, "DEADLOCK: ") && strings.Contains(r.Verdict, "permit")
			if tt.leaks && (r.Safety.LeakedPermits == 0 || !deadlock) {
				t.Errorf("leaked %d permits, verdict %q; want some leaked and a DEADLOCK naming them", r.Safety.LeakedPermits, r.Verdict)
			}
			if !tt.leaks && (r.Safety.LeakedPermits != 0 || strings.Contains(r.Verdict, "DEADLOCK")) {
				t.Errorf("leaked %d permits, verdict %q; want none: their leases ran out", r.Safety.LeakedPermits, r.Verdict)
			}
		})
	}
}

// A rw-lock with 9 reads in 10: readers share a key, never beside a writer.
func TestRWLockReadersShare(t *testing.T) {
	t.Parallel()
	requireRegistered(t, "rw-lock")
	_, c := redistest.Server(t)
	cfg := holdersConfig("rw-lock", 20, 1)
	cfg.ReadRatio = 0.9
	results, err := Run(context.Background(), cfg, redisBackend(c), Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := results[0]
	s := r.Safety
	t.Logf("rw-lock read ratio 0.9: %d acquired, max holders %d (readers %d, writers %d), overlaps %d, %.1f commands/acquire, verdict %q",
		r.Acquired, s.MaxHolders, s.MaxReaders, s.MaxWriters, s.Overlaps, r.Redis.CommandsPerAcquire, r.Verdict)
	if r.Acquired == 0 || s.Overlaps != 0 || s.Misdeletes != 0 || r.Verdict != "safe" {
		t.Errorf("acquired %d, overlaps %d, misdeletes %d, verdict %q", r.Acquired, s.Overlaps, s.Misdeletes, r.Verdict)
	}
	if s.MaxHolders < 2 || s.MaxReaders < 2 || s.MaxWriters != 1 {
		t.Errorf("max holders %d, readers %d, writers %d; want readers sharing (>1) and one writer at a time", s.MaxHolders, s.MaxReaders, s.MaxWriters)
	}
	if r.ReadRatio != 0.9 {
		t.Errorf("result's read ratio %v", r.ReadRatio)
	}
}

// multilock over sets of 3 of 10 keys, 20 workers: sets overlap, yet nobody meets anyone
// inside a key, and every acquire completes.
func TestMultilockSets(t *testing.T) {
	t.Parallel()
	requireRegistered(t, "multilock")
	_, c := redistest.Server(t)
	cfg := holdersConfig("multilock", 20, 10)
	cfg.LockSet = 3
	cfg.AcquireTimeout = 30 * time.Second // opposite orders stall a round of 1.5s per key
	results, err := Run(context.Background(), cfg, redisBackend(c), Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := results[0]
	t.Logf("multilock lock-set 3 over 10 keys: %d acquired, %d timeouts, max holders %d, overlaps %d, %.1f commands/acquire, verdict %q",
		r.Acquired, r.Timeouts, r.Safety.MaxHolders, r.Safety.Overlaps, r.Redis.CommandsPerAcquire, r.Verdict)
	if r.Acquired == 0 || r.Timeouts != 0 || r.Errors != 0 {
		t.Errorf("acquired %d, timeouts %d, errors %d; want every acquire to complete", r.Acquired, r.Timeouts, r.Errors)
	}
	if r.Safety.Overlaps != 0 || r.Safety.MaxHolders != 1 || r.Verdict != "safe" || r.LockSet != 3 {
		t.Errorf("overlaps %d, max holders %d, verdict %q, lock set %d", r.Safety.Overlaps, r.Safety.MaxHolders, r.Verdict, r.LockSet)
	}
	if !r.Redis.Measured || r.Redis.CommandsPerAcquire <= 0 {
		t.Errorf("cost per acquire not reported: %+v", r.Redis)
	}
}

// The settings only some locks take are refused elsewhere, naming the field and the
// strategies that take it.
func TestCapacitySettingsRefused(t *testing.T) {
	for _, tt := range []struct {
		name  string
		set   func(*Config)
		field string
		want  string
	}{
		{"read ratio on token", func(c *Config) { c.ReadRatio = 0.5 }, "read-ratio", "rw-lock"},
		{"read ratio above 1", func(c *Config) { c.Strategies = []string{"rw-lock"}; c.ReadRatio = 1.5 }, "read-ratio", "0 to 1"},
		{"permits on token", func(c *Config) { c.Permits = 3 }, "permits", "semaphore"},
		{"permits below 1", func(c *Config) { c.Strategies = []string{"semaphore"}; c.Permits = -1 }, "permits", "at least 1"},
		{"lock set on token", func(c *Config) { c.LockSet = 2 }, "lock-set", "multilock"},
		{"lock set beyond keys", func(c *Config) { c.Strategies = []string{"multilock"}; c.LockSet = 4; c.Keys = 3 }, "lock-set", "at most --keys (3)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := Config{Strategies: []string{"token"}}
			tt.set(&cfg)
			err := cfg.Validate()
			ce, ok := err.(*ConfigError)
			if !ok || ce.Field != tt.field || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Validate() = %v; want a ConfigError on %s saying %q", err, tt.field, tt.want)
			}
		})
	}
	ok := Config{Strategies: []string{"semaphore"}, Base: Base{Load: Load{Permits: 3}}}
	if err := ok.Validate(); err != nil {
		t.Errorf("semaphore with 3 permits: %v", err)
	}
}

// Choosing a lock set and a read, and entering and leaving by capacity, allocate nothing.
func TestChooseAndEnterAllocateNothing(t *testing.T) {
	p := &phase{ph: Phase{Base: Base{Load: Load{LockSet: 3, ReadRatio: 0.5}}}, cfg: &Config{}, state: make([]keyState, 10), capa: capacity{rw: true}}
	for i := range p.state {
		p.state[i].key = "k{" + string(rune('0'+i)) + "}"
	}
	w := p.newWorker(context.Background(), context.Background(), 1)
	defer w.actx.close()
	if n := testing.AllocsPerRun(1000, func() {
		p.choose(w)
		for i, k := range w.held {
			_, w.entries[i], _ = p.state[k].enterAs(p.capa, w.read)
		}
		for i, k := range w.held {
			p.state[k].exitAs(p.capa, w.read, w.entries[i])
		}
	}); n != 0 {
		t.Errorf("%v allocations per choose and enter", n)
	}
	if len(w.held) != 3 || w.held[0] >= w.held[1] || w.held[1] >= w.held[2] {
		t.Errorf("set %v: want 3 distinct keys in order", w.held)
	}
}
