package faults_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lockbench/lockbench/faults"
	"github.com/lockbench/lockbench/internal/redistest"
	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/schema"
	"github.com/lockbench/lockbench/services/redis"
	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/workload"
)

// bench is a target spawned for one test, wired as the CLI wires it (flags.go: session,
// open, options): TCP proxies in front of the servers when a fault needs them, the
// replication proxy of the failover fault, and one faults.Nodes for every phase.
type bench struct {
	conn    *redis.Conn
	proxies *faults.Proxies // nil unless asked for
	nodes   *faults.Nodes
}

// benchSpec says what to spawn.
type benchSpec struct {
	topology string // single, redlock or sentinel
	proxy    bool   // clients reach the servers through proxies (latency, partition)
	failover bool   // replication goes through a proxy the failover fault lags and cuts
}

// spawn starts the topology and closes it (and the proxies) when t ends.
func spawn(t *testing.T, s benchSpec) *bench {
	t.Helper()
	redistest.Require(t)
	// A `lockbench target up` on this machine must not become the test's target: point Open
	// at a state file that does not exist, so that it always spawns.
	spec := redis.Spec{Topology: s.topology, StatePath: filepath.Join(t.TempDir(), "no-target-up.json")}
	b := &bench{}
	if s.proxy || s.failover {
		b.proxies = faults.NewProxies()
		t.Cleanup(b.proxies.Close) // runs after conn.Close: cleanups run last-in, first-out
	}
	if s.proxy {
		spec.Dial = b.proxies.Dial
	}
	if s.failover {
		spec.ReplicationVia = b.proxies.Replication
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	conn, err := redis.Open(ctx, spec)
	if err != nil {
		t.Fatalf("open %s target: %v", s.topology, err)
	}
	t.Cleanup(conn.Close)
	if conn.Mode != "spawned" || conn.Topology != s.topology {
		t.Fatalf("got a %s %s target, want a spawned %s", conn.Mode, conn.Topology, s.topology)
	}
	b.conn = conn
	b.nodes = faults.NewNodes(&redis.Home{Conn: conn}, b.proxies)
	return b
}

// options are the engine's collaborators, built as flags.go's session.options builds them.
func (b *bench) options() workload.Options {
	return workload.Options{
		Faults: func(ph workload.Phase) (workload.Faults, error) {
			specs, err := faults.ParseAll(ph.Faults)
			if err != nil {
				return nil, err
			}
			return faults.New(specs, ph.Concurrency(), b.nodes)
		},
	}
}

// run drives cfg's phases against the target, writes them as the JSON report and returns
// the results read back from that JSON, so that every check below is on what a user of
// --format json gets.
func (b *bench) run(t *testing.T, cfg workload.Config) []report.Result {
	t.Helper()
	results, err := workload.Run(context.Background(), cfg, b.target(), b.options())
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return b.viaJSON(t, cfg, results)
}

// runApart runs every phase of cfgs at once, each as a run of its own against a target of
// its own spawned as s says, and returns their results in order as run does. For phases
// that mostly wait (long holds, pauses, ttls): side by side a test takes about as long as
// its longest phase, not their sum, and phases compared with each other face the same
// machine at the same time. Their own servers keep each phase's Redis cost its own.
func runApart(t *testing.T, s benchSpec, cfgs ...workload.Config) []report.Result {
	t.Helper()
	type run struct {
		b       *bench
		cfg     workload.Config
		results []report.Result
		err     error
	}
	var runs []*run
	for _, cfg := range cfgs {
		for _, ph := range cfg.Phases {
			one := cfg
			one.Strategies, one.Phases = nil, []workload.Phase{ph} // Validate writes both
			runs = append(runs, &run{b: spawn(t, s), cfg: one})
		}
	}
	var wg sync.WaitGroup
	for _, r := range runs {
		wg.Go(func() { r.results, r.err = workload.Run(context.Background(), r.cfg, r.b.target(), r.b.options()) })
	}
	wg.Wait()
	var out []report.Result
	for _, r := range runs {
		if r.err != nil {
			t.Fatalf("run %s: %v", r.cfg.Phases[0].Strategy, r.err)
		}
		out = append(out, r.b.viaJSON(t, r.cfg, r.results)...)
	}
	return out
}

func (b *bench) target() redis.Backend {
	return redis.Backend{Client: b.conn.Client, Nodes: b.conn.Nodes}
}

// viaJSON writes results as the JSON report, checks it against the contract and returns
// the results read back from it.
func (b *bench) viaJSON(t *testing.T, cfg workload.Config, results []report.Result) []report.Result {
	t.Helper()
	sum := &report.Summary{
		Tool: "lockbench", Kind: report.KindRun, Version: "test", StartedAt: time.Now().UTC(),
		Target:  report.Target{Mode: b.conn.Mode, Topology: b.conn.Topology, Addrs: b.conn.Addrs, RedisVersion: b.conn.RedisVersion},
		Config:  cfg.Report(),
		Results: results,
	}
	var buf bytes.Buffer
	if err := report.JSON(&buf, sum); err != nil {
		t.Fatal(err)
	}
	if err := schema.Validate(schema.Result, buf.Bytes()); err != nil {
		t.Fatalf("the JSON report breaks its contract: %v", err)
	}
	var back report.Summary
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil {
		t.Fatalf("decode the JSON report: %v", err)
	}
	for _, r := range back.Results {
		t.Logf("%s", describe(r))
	}
	return back.Results
}

// config is a short run: 0.5 s of warm-up and the given measured time per phase.
func config(duration time.Duration, phases ...workload.Phase) workload.Config {
	return workload.Config{
		Phases:         phases,
		Duration:       duration,
		Warmup:         500 * time.Millisecond,
		AcquireTimeout: time.Second,
	}
}

// phase is one phase of strategy with the settings every test here starts from; mod
// adjusts it.
//
// The waiters back off (1–50 ms), as these tests were calibrated with before --wait native
// became the default: a fault's effect, not the articles' retry-at-once loops, is what they
// measure, and 60 workers spinning at once on a 2-core machine stretch holds past the ttl by
// themselves (an overlap no fault made).
func phase(strategy string, mod func(*workload.Phase)) workload.Phase {
	backoff, err := strategies.ParseWait("backoff")
	if err != nil {
		panic(err)
	}
	c := workload.Config{Base: workload.Base{Load: workload.Load{Workers: 20, Keys: 4}, Lock: workload.Lock{TTL: strategies.TTLOf(time.Second), Wait: backoff}}}
	ph := c.Phase(strategy)
	if mod != nil {
		mod(&ph)
	}
	return ph
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
	var tl []string
	for _, s := range r.Timeline {
		tl = append(tl, fmt.Sprintf("%.1fs:%d/%dt/%de", s.TS, s.Acquired, s.Timeouts, s.Errors))
	}
	return fmt.Sprintf("%s %v: verdict %q acquired %d (%.0f/s) timeouts %d errors %d p50 %dµs overlaps %d stale_fences %d lost %d stuck %d cmd/acq %.1f renewals %d\n  timeline %s\n  events %v\n  notes %v",
		name, r.Faults, r.Verdict, r.Acquired, r.AcquireRate, r.Timeouts, r.Errors, r.LatencyUS.Acquire.P50,
		r.Safety.Overlaps, r.Safety.StaleFences, r.Safety.LostLeases, r.Safety.StuckKeys,
		r.Redis.CommandsPerAcquire, r.Renewals, strings.Join(tl, " "), r.Events, r.Notes)
}

// event returns the first event of r by fault whose text contains what, and checks that
// the JSON timeline shows it in the second it happened in: the first point whose t_s is not
// before the event's, or the last point for an event of the window's close (a fault undone,
// a count of what a client-side fault did), which comes after the last sample.
func event(t *testing.T, r report.Result, fault, what string) report.Event {
	t.Helper()
	i := slices.IndexFunc(r.Events, func(e report.Event) bool { return e.Fault == fault && strings.Contains(e.What, what) })
	if i < 0 {
		t.Fatalf("%s: no event of %q saying %q; events: %v", r.Strategy, fault, what, r.Events)
	}
	e := r.Events[i]
	if len(r.Timeline) == 0 {
		t.Fatalf("%s: no timeline to show event %q in", r.Strategy, e.What)
	}
	text := e.Fault + ": " + e.What
	sec := slices.IndexFunc(r.Timeline, func(s report.Second) bool { return e.TS <= s.TS })
	if sec < 0 {
		sec = len(r.Timeline) - 1
	}
	if !slices.Contains(r.Timeline[sec].Events, text) {
		t.Errorf("%s: event %q at t=%.2fs missing from timeline[%d] (t=%.2fs), whose events are %q",
			r.Strategy, text, e.TS, sec, r.Timeline[sec].TS, r.Timeline[sec].Events)
	}
	return e
}

// second returns the timeline point covering time ts of the window.
func second(t *testing.T, r report.Result, ts float64) report.Second {
	t.Helper()
	i := slices.IndexFunc(r.Timeline, func(s report.Second) bool { return ts <= s.TS })
	if i < 0 {
		t.Fatalf("%s: no timeline point covers t=%.2fs: %v", r.Strategy, ts, r.Timeline)
	}
	return r.Timeline[i]
}

// lastWhole is the timeline's last full second: the very last point can be the drain's
// tail, a fraction of a second with a handful of acquires.
func lastWhole(t *testing.T, r report.Result) report.Second {
	t.Helper()
	for i := len(r.Timeline) - 1; i > 0; i-- {
		if r.Timeline[i].TS-r.Timeline[i-1].TS >= 0.9 {
			return r.Timeline[i]
		}
	}
	t.Fatalf("%s: no full second after the first in the timeline: %v", r.Strategy, r.Timeline)
	return report.Second{}
}

// pids lists the processes of every spawned server and sentinel now.
func pids(c *redis.Conn) []int {
	var out []int
	for _, s := range append(slices.Clone(c.Servers), c.Sentinels...) {
		if pid := s.Pid(); pid != 0 {
			out = append(out, pid)
		}
	}
	return out
}

// alive reports whether a process with that id exists (signal 0 checks without sending).
func alive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	err = p.Signal(syscall.Signal(0))
	return err == nil || errors.Is(err, syscall.EPERM)
}

// refuses reports whether nothing accepts connections on addr any more.
func refuses(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return true
	}
	c.Close()
	return false
}
