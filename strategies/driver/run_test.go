package driver_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/faults"
	"github.com/lockbench/lockbench/internal/redistest"
	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/services/redis"
	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/strategies/driver"
	"github.com/lockbench/lockbench/workload"
)

// spawn starts a single Redis as the CLI does, stopped when t ends.
func spawn(t *testing.T) *redis.Conn {
	t.Helper()
	redistest.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	conn, err := redis.Open(ctx, redis.Spec{Topology: "single", StatePath: filepath.Join(t.TempDir(), "none.json")})
	if err != nil {
		t.Fatalf("open target: %v", err)
	}
	t.Cleanup(conn.Close)
	return conn
}

// run drives cfg's phases against conn through the engine, with the fault layer.
func run(t *testing.T, conn *redis.Conn, cfg workload.Config) []report.Result {
	t.Helper()
	nodes := faults.NewNodes(&redis.Home{Conn: conn}, nil)
	opts := workload.Options{Faults: func(ph workload.Phase) (workload.Faults, error) {
		specs, err := faults.ParseAll(ph.Faults)
		if err != nil {
			return nil, err
		}
		return faults.New(specs, ph.Concurrency(), nodes)
	}}
	rs, err := workload.Run(context.Background(), cfg, conn.Backend(), opts)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	for _, r := range rs {
		t.Logf("%s %s: verdict %q acquired %d timeouts %d errors %d overlaps %d renewals %d blocked %+v notes %v events %v",
			r.Strategy, r.Label, r.Verdict, r.Acquired, r.Timeouts, r.Errors, r.Safety.Overlaps, r.Renewals,
			r.Safety.BlockedAfterCrash, strings.Join(r.Notes, "; "), r.Events)
	}
	return rs
}

func phase(strategy string, mod func(*workload.Phase)) workload.Phase {
	c := workload.Config{Base: workload.Base{Load: workload.Load{Workers: 20, Keys: 1}, Lock: workload.Lock{TTL: strategies.TTLOf(2 * time.Second)}}}
	ph := c.Phase(strategy)
	if err := ph.Hold.Set("1ms"); err != nil {
		panic(err)
	}
	if mod != nil {
		mod(&ph)
	}
	return ph
}

func config(d time.Duration, phases ...workload.Phase) workload.Config {
	return workload.Config{Phases: phases, Duration: d, Warmup: 300 * time.Millisecond, AcquireTimeout: 2 * time.Second}
}

// Through the engine, a driver's lock on Redis keeps mutual exclusion on a hot key with its
// Redis cost measured, and the null driver's in-memory lock does too within one process.
func TestEngineRunsDrivers(t *testing.T) {
	conn := spawn(t)
	bin := testdriver(t)
	rs := run(t, conn, config(time.Second, phase("driver:"+bin+" token", nil), phase("driver:"+bin+" null", nil)))
	for _, r := range rs {
		if r.Acquired == 0 || r.Errors != 0 || r.Verdict != "safe" {
			t.Errorf("%s: acquired %d, errors %d, verdict %q: want acquisitions, no error, safe", r.Strategy, r.Acquired, r.Errors, r.Verdict)
		}
		if slices.ContainsFunc(r.Notes, func(n string) bool { return strings.HasPrefix(n, "lockbench's chain:") }) {
			t.Errorf("%s: notes %q: a driver that does not chain was said to", r.Strategy, r.Notes)
		}
	}
	// The result names the library and version the driver's hello gave.
	if rs[0].Source != "testdriver 1 (token)" || rs[1].Source != "testdriver 1 (null)" {
		t.Errorf("sources %q, %q: want the drivers' hello versions", rs[0].Source, rs[1].Source)
	}
	if r := rs[0]; !r.Redis.Measured || r.Redis.CommandsPerAcquire < 2 {
		t.Errorf("token driver: Redis cost %+v: want a lock and an unlock per acquire at least", r.Redis)
	}
}

// A holder that dies (holder-crash) is abandoned: the driver stops the renewal it runs by
// itself, so the key is blocked until its ttl frees it — not for good, as it would be if
// the driver went on renewing a lock nobody will release.
func TestHolderCrashAbandons(t *testing.T) {
	t.Setenv("TESTDRIVER_SELF_RENEW", "1")
	conn := spawn(t)
	const ttl = 400 * time.Millisecond
	rs := run(t, conn, config(2500*time.Millisecond, phase("driver:"+testdriver(t)+" token", func(ph *workload.Phase) {
		ph.Keys, ph.TTL, ph.Hold, ph.Faults = 4, strategies.TTLOf(ttl), hold("200ms"), []string{"holder-crash:p=0.2"}
	})))
	r := rs[0]
	b := r.Safety.BlockedAfterCrash
	if r.Safety.CrashedHolders == 0 || b == nil || b.Recovered == 0 {
		t.Fatalf("crashed %d, blocked %+v: want crashes whose keys came back", r.Safety.CrashedHolders, b)
	}
	if b.Stuck != 0 && b.StuckFor > (10*ttl).Milliseconds() {
		t.Errorf("%d keys stuck for %dms after a crash: the driver kept renewing an abandoned lock", b.Stuck, b.StuckFor)
	}
	if r.Renewals == 0 {
		t.Errorf("no renewals reported: the driver's extended events should count")
	}
	// A key frees itself no sooner than the ttl after the death (its last renewal, at most
	// ttl/3 before it, may move that later by as much).
	if b.P50 < (ttl - ttl/3 - 50*time.Millisecond).Milliseconds() {
		t.Errorf("blocked p50 %dms after a crash: want about the ttl (%s)", b.P50, ttl)
	}
}

// A lock without renewal lets a second holder in when a hold outlives its ttl: the oracle
// sees the overlap through the driver as it does for a Go lock.
func TestHolderPauseIsUnsafe(t *testing.T) {
	conn := spawn(t)
	rs := run(t, conn, config(2*time.Second, phase("driver:"+testdriver(t)+" token", func(ph *workload.Phase) {
		ph.Keys, ph.TTL, ph.Faults = 2, strategies.TTLOf(100*time.Millisecond), []string{"holder-pause:p=0.2,d=300ms"}
	})))
	if r := rs[0]; r.Safety.Overlaps == 0 || !strings.HasPrefix(r.Verdict, report.VerdictUnsafe) {
		t.Errorf("overlaps %d, verdict %q: want UNSAFE", r.Safety.Overlaps, r.Verdict)
	}
}

func hold(s string) workload.Hold {
	var h workload.Hold
	if err := h.Set(s); err != nil {
		panic(fmt.Sprint(err))
	}
	return h
}

// A driver that dies, hangs or writes garbage ends its phase at once — not when the window
// closes — with one line naming the driver, the run's error and the phase's first error,
// and neither the driver nor the child it started outlives the run.
func TestBrokenDriverEndsPhase(t *testing.T) {
	defer driver.SetTimeouts(500*time.Millisecond, 10*time.Second)()
	conn := spawn(t)
	bin := testdriver(t)
	const window = time.Minute
	for _, tc := range []struct{ args, want string }{
		{"die-after 50", "exited (exit status 3); its stderr ends: testdriver: dying as asked"},
		{"hang-after 50", "hung: no reply to "},
		{"garbage-after 50", `wrote a line that is not JSON: "this is not json"`},
	} {
		t.Run(strings.Fields(tc.args)[0], func(t *testing.T) {
			pidfile := filepath.Join(t.TempDir(), "pids")
			t.Setenv("TESTDRIVER_PIDFILE", pidfile)
			cmd := bin + " null " + tc.args
			cfg := config(window, phase("driver:"+cmd, nil), phase("driver:"+bin+" null", nil))
			cfg.Warmup = -1 // none: the driver breaks in the window
			rs, err := workload.Run(context.Background(), cfg, conn.Backend(), workload.Options{})
			var de *driver.Error
			if !errors.As(err, &de) || !strategies.IsFatal(err) || !strings.Contains(err.Error(), tc.want) ||
				!strings.Contains(err.Error(), `driver "`+cmd+`"`) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("run error %v: want one line naming the driver and saying %q", err, tc.want)
			}
			if len(rs) != 1 {
				t.Fatalf("%d results: want the broken phase's alone, the run ended with it", len(rs))
			}
			r := rs[0]
			t.Logf("window %.1fs of %s, acquired %d, errors %d, first errors %+v, notes %q", r.DurationS, window, r.Acquired, r.Errors, r.FirstErrors, r.Notes)
			// The driver broke at its 50th acquire: the phase ended then, not a minute later.
			if r.DurationS >= window.Seconds()/2 || r.Acquired > 50 {
				t.Errorf("the phase ran %.1fs of its %s window and acquired %d: want it ended when the driver broke", r.DurationS, window, r.Acquired)
			}
			if len(r.FirstErrors) == 0 || r.FirstErrors[0].Message != err.Error() {
				t.Errorf("FirstErrors %+v: want the driver's line %q", r.FirstErrors, err)
			}
			if !slices.ContainsFunc(r.Notes, func(n string) bool {
				return strings.HasPrefix(n, "phase ended after") && strings.Contains(n, err.Error())
			}) {
				t.Errorf("notes %q: want one saying the phase ended early, and why", r.Notes)
			}
			gone(t, pidsIn(t, pidfile))
		})
	}
}

// Through the engine, a driver that supports chain gets the closed loop's releases with the
// worker's next acquire in them: the hot key stays safe, and the oracle still sees the
// overlaps that holds past the ttl let in.
func TestEngineChains(t *testing.T) {
	t.Setenv("TESTDRIVER_CHAIN", "1")
	conn := spawn(t)
	bin := testdriver(t)
	for _, tc := range []struct {
		name   string
		mod    func(*workload.Phase)
		unsafe bool
	}{
		{"hot key", nil, false},
		{"holder-pause", func(ph *workload.Phase) {
			ph.Keys, ph.TTL, ph.Faults = 2, strategies.TTLOf(100*time.Millisecond), []string{"holder-pause:p=0.2,d=300ms"}
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "chained")
			t.Setenv("TESTDRIVER_CHAINFILE", file)
			r := run(t, conn, config(time.Second, phase("driver:"+bin+" token", tc.mod)))[0]
			chained := countIn(t, file)
			t.Logf("releases that carried an acquire: %d of %d acquires", chained, r.Acquired)
			if chained == 0 || r.Acquired == 0 || r.Errors != 0 {
				t.Errorf("chained %d, acquired %d, errors %d: want chained releases, acquisitions, no error", chained, r.Acquired, r.Errors)
			}
			if !slices.ContainsFunc(r.Notes, func(n string) bool { return strings.HasPrefix(n, "lockbench's chain:") }) {
				t.Errorf("notes %q: want one saying the releases carried the next acquires (lockbench's chain)", r.Notes)
			}
			if unsafe := strings.HasPrefix(r.Verdict, report.VerdictUnsafe); unsafe != tc.unsafe || (tc.unsafe && r.Safety.Overlaps == 0) {
				t.Errorf("verdict %q, overlaps %d: want UNSAFE %v", r.Verdict, r.Safety.Overlaps, tc.unsafe)
			}
		})
	}
}

// countIn reads the number the test driver writes to file when it ends, waiting for it.
func countIn(t *testing.T, file string) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, err := os.ReadFile(file)
		if s := strings.TrimSpace(string(b)); err == nil && strings.HasSuffix(string(b), "\n") {
			n, err := strconv.Atoi(s)
			if err != nil {
				t.Fatalf("%s: %q", file, b)
			}
			return n
		}
		if time.Now().After(deadline) {
			t.Fatalf("no count in %s: %q %v", file, b, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
