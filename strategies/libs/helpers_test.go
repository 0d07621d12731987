package libs_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/faults"
	"github.com/lockbench/lockbench/internal/redistest"
	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/services/redis"
	"github.com/lockbench/lockbench/strategies"
	_ "github.com/lockbench/lockbench/strategies/libs"
	"github.com/lockbench/lockbench/workload"
)

// The library strategies, one per library and variant.
var libNames = []string{"redsync", "redislock", "redislock-linear", "redislock-exp", "rueidislock", "rueidislock-readme"}

// spawn starts a topology (single or redlock) as the CLI does, and stops it when t ends.
func spawn(t testing.TB, topology string) *redis.Conn {
	t.Helper()
	redistest.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// A `lockbench target up` on this machine must not become the test's target.
	conn, err := redis.Open(ctx, redis.Spec{Topology: topology, StatePath: filepath.Join(t.TempDir(), "none.json")})
	if err != nil {
		t.Fatalf("open %s target: %v", topology, err)
	}
	t.Cleanup(conn.Close)
	return conn
}

// backend is the Redis backend of conn, wired as the CLI wires it (session.Backend).
func backend(conn *redis.Conn) redis.Backend {
	return conn.Backend()
}

// build makes the named strategy on conn, closed when t ends.
func build(t testing.TB, conn *redis.Conn, name string, o strategies.Options) strategies.Strategy {
	t.Helper()
	backend(conn).Configure(&o)
	s, err := strategies.New(name, o)
	if err != nil {
		t.Fatalf("build %s: %v", name, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// run drives cfg's phases against conn, with the fault layer when a phase has faults.
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
	results, err := workload.Run(context.Background(), cfg, backend(conn), opts)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	for _, r := range results {
		t.Log(describe(r))
	}
	return results
}

// phase is a phase of strategy on one hot key; mod adjusts it.
func phase(strategy string, mod func(*workload.Phase)) workload.Phase {
	c := workload.Config{Base: workload.Base{Load: workload.Load{Workers: 20, Keys: 1}, Lock: workload.Lock{TTL: strategies.TTLOf(2 * time.Second)}}}
	ph := c.Phase(strategy)
	ph.Hold = hold("1ms")
	if mod != nil {
		mod(&ph)
	}
	return ph
}

// config is a short run of phases: 0.3s warm-up, duration measured per phase.
func config(duration time.Duration, phases ...workload.Phase) workload.Config {
	return workload.Config{Phases: phases, Duration: duration, Warmup: 300 * time.Millisecond, AcquireTimeout: 2 * time.Second}
}

func hold(s string) workload.Hold {
	var h workload.Hold
	if err := h.Set(s); err != nil {
		panic(err)
	}
	return h
}

// describe is one line of a result, for the test log.
func describe(r report.Result) string {
	name := r.Strategy
	if r.Label != "" {
		name += " " + r.Label
	}
	return fmt.Sprintf("%s: verdict %q acquired %d (%.0f/s) timeouts %d errors %d p99 %dµs overlaps %d lost %d cmd/acq %.1f renewals %d events %v notes %v",
		name, r.Verdict, r.Acquired, r.AcquireRate, r.Timeouts, r.Errors, r.LatencyUS.Acquire.P99,
		r.Safety.Overlaps, r.Safety.LostLeases, r.Redis.CommandsPerAcquire, r.Renewals, r.Events, strings.Join(r.Notes, "; "))
}
