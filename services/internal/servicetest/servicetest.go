// Package servicetest is what the tests of the other lock services share: skipping when a
// server is not installed (never under CI=1, where scripts/test.sh installs it), and
// driving phases through the engine as the CLI does, client-side faults included.
package servicetest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockbench/lockbench/faults"
	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/workload"
)

// Require skips the test when none of paths exists (a binary name is looked up in PATH),
// unless CI=1: there a missing server is a failure.
func Require(t testing.TB, what string, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if _, err := os.Stat(p); err == nil {
			return
		}
		if _, err := exec.LookPath(p); err == nil {
			return
		}
	}
	if os.Getenv("CI") == "1" {
		t.Fatalf("%s is not installed (CI=1: scripts/test.sh installs it)", what)
	}
	t.Skipf("%s is not installed", what)
}

// Missing skips the test, or fails it under CI=1, for a server TestMain could not find.
func Missing(t testing.TB, what string) {
	t.Helper()
	if os.Getenv("CI") == "1" {
		t.Fatalf("%s is not installed (CI=1: scripts/test.sh installs it)", what)
	}
	t.Skipf("%s is not installed", what)
}

// Installed reports whether one of paths exists, for TestMain (which has no t to skip).
func Installed(paths ...string) bool {
	for _, p := range paths {
		if _, err := os.Stat(p); err == nil {
			return true
		}
		if _, err := exec.LookPath(p); err == nil {
			return true
		}
	}
	return false
}

// Phase is a phase of strategy with the settings the service tests start from: 20 workers
// on 4 keys (five contenders per key), holds of 5ms; mod adjusts it.
func Phase(strategy string, ttl time.Duration, mod func(*workload.Phase)) workload.Phase {
	c := workload.Config{Base: workload.Base{Load: workload.Load{Workers: 20, Keys: 4}, Lock: workload.Lock{TTL: strategies.TTLOf(ttl)}}}
	ph := c.Phase(strategy)
	var h workload.Hold
	_ = h.Set("5ms")
	ph.Hold = h
	if mod != nil {
		mod(&ph)
	}
	return ph
}

// Event is the first event of r that contains what, failing the test without one.
func Event(t testing.TB, r report.Result, what string) report.Event {
	t.Helper()
	for _, e := range r.Events {
		if strings.Contains(e.What, what) {
			return e
		}
	}
	t.Fatalf("%s: no event %q among %+v", r.Strategy, what, r.Events)
	return report.Event{}
}

// KilledAndBack checks what the kill fault with a restart leaves in r: the server killed
// and back on its data as a new process (pid now, first before), acquires once it was
// back, and no cost read across the restart. It returns when the server was back.
func KilledAndBack(t testing.TB, r report.Result, first, pid int) float64 {
	t.Helper()
	Event(t, r, "killed (SIGKILL)")
	back := Event(t, r, "restarted on its data")
	if pid == first {
		t.Errorf("%s: the server's pid is still %d after the kill", r.Strategy, first)
	}
	if n := AcquiredAfter(r, back.TS); n == 0 {
		t.Errorf("%s: no acquire after the server came back at %.2fs", r.Strategy, back.TS)
	}
	if r.Redis.Measured {
		t.Errorf("%s: the cost was measured across the server's restart", r.Strategy)
	}
	return back.TS
}

// AcquiredAfter is how many acquires r's timeline counts in its seconds that begin at ts or
// later.
func AcquiredAfter(r report.Result, ts float64) uint64 {
	var n uint64
	for i, s := range r.Timeline {
		begin := s.TS - 1
		if i > 0 {
			begin = r.Timeline[i-1].TS
		}
		if begin >= ts {
			n += s.Acquired
		}
	}
	return n
}

// Hold parses a --hold value.
func Hold(t testing.TB, s string) workload.Hold {
	t.Helper()
	var h workload.Hold
	if err := h.Set(s); err != nil {
		t.Fatal(err)
	}
	return h
}

// Run drives the phases on b for measured each (plus 0.5 s of warm-up) with the client-side
// faults wired as the CLI wires them, and logs each result.
func Run(t testing.TB, b workload.Backend, measured, acquireTimeout time.Duration, phases ...workload.Phase) []report.Result {
	t.Helper()
	return RunOn(t, b, nil, measured, acquireTimeout, phases...)
}

// RunOn is Run with the node faults (kill, redis-pause) acting on nodes, the service's
// members as the CLI hands them over (faults.ServiceNodes).
func RunOn(t testing.TB, b workload.Backend, nodes *faults.Nodes, measured, acquireTimeout time.Duration, phases ...workload.Phase) []report.Result {
	t.Helper()
	cfg := workload.Config{Phases: phases, Duration: measured, Warmup: 500 * time.Millisecond, AcquireTimeout: acquireTimeout}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rs, err := workload.Run(ctx, cfg, b, workload.Options{Faults: faultLayer(nodes, nil)})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	logResults(t, rs)
	return rs
}

// Until is what a phase run by RunUntil waits for, given the fault events and the timeline
// seconds so far. It is called from the engine's collector once a second.
type Until func(events []report.Event, timeline []report.Second) bool

// RunUntil drives one phase on b like RunOn, but its measured window ends as soon as until
// holds (checked once a second) or after limit: a test waits for what a fault must lead
// to (a server back, acquires after it) instead of guessing how long a loaded machine
// needs. The limit is a generous bound, not a timing window; met reports whether until
// held, and a result that got to the limit without it carries what ran.
func RunUntil(t testing.TB, b workload.Backend, nodes *faults.Nodes, limit, acquireTimeout time.Duration, ph workload.Phase, until Until) (r report.Result, met bool) {
	t.Helper()
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var (
		mu       sync.Mutex
		events   []report.Event
		timeline []report.Second
	)
	seen := func(e report.Event) { mu.Lock(); events = append(events, e); mu.Unlock() }
	progress := func(pr workload.Progress) {
		if pr.Warmup {
			return
		}
		s := pr.Second
		mu.Lock()
		defer mu.Unlock()
		timeline = append(timeline, report.Second{TS: pr.Elapsed.Seconds(), Acquired: s.Acquired, Timeouts: s.Timeouts, Errors: s.Errors, Overlaps: s.Overlaps})
		if !met && until(events, timeline) {
			met = true
			stop()
		}
	}
	cfg := workload.Config{Phases: []workload.Phase{ph}, Duration: limit, Warmup: 500 * time.Millisecond, AcquireTimeout: acquireTimeout}
	rs, err := workload.Run(ctx, cfg, b, workload.Options{Progress: progress, Faults: faultLayer(nodes, seen)})
	mu.Lock()
	ended := met
	mu.Unlock()
	if err != nil && !(ended && errors.Is(err, context.Canceled)) || len(rs) != 1 {
		t.Fatalf("run: %v", err)
	}
	logResults(t, rs)
	if !ended {
		t.Logf("%s: the condition awaited did not hold within %s", rs[0].Strategy, limit)
	}
	return rs[0], ended
}

// faultLayer builds a phase's faults as the CLI does, on nodes; seen, when set, also gets
// every fault event as it happens.
func faultLayer(nodes *faults.Nodes, seen func(report.Event)) func(workload.Phase) (workload.Faults, error) {
	return func(ph workload.Phase) (workload.Faults, error) {
		specs, err := faults.ParseAll(ph.Faults)
		if err != nil {
			return nil, err
		}
		f, err := faults.New(specs, ph.Concurrency(), nodes)
		if err != nil || seen == nil {
			return f, err
		}
		return observed{Faults: f, seen: seen}, nil
	}
}

// observed passes a phase's fault events on to seen as well as to the engine.
type observed struct {
	workload.Faults
	seen func(report.Event)
}

func (o observed) Run(ctx context.Context, windowStart time.Time, emit func(report.Event)) {
	o.Faults.Run(ctx, windowStart, func(e report.Event) { emit(e); o.seen(e) })
}

// Find is the first of events whose What contains what.
func Find(events []report.Event, what string) (report.Event, bool) {
	for _, e := range events {
		if strings.Contains(e.What, what) {
			return e, true
		}
	}
	return report.Event{}, false
}

// AcquiredAfterEvent is an Until: the event what happened, and a timeline second that
// began after it counts n acquires or more.
func AcquiredAfterEvent(what string, n uint64) Until {
	return func(events []report.Event, timeline []report.Second) bool {
		e, ok := Find(events, what)
		return ok && AcquiredAfter(report.Result{Timeline: timeline}, e.TS) >= n
	}
}

// AcquiredAtLeast is an Until: the window has counted n acquires, enough for a cost per
// acquire that the phase's fixed costs (sessions opened, the readings) do not blur.
func AcquiredAtLeast(n uint64) Until {
	return func(_ []report.Event, timeline []report.Second) bool {
		return AcquiredAfter(report.Result{Timeline: timeline}, math.Inf(-1)) >= n
	}
}

// Rate is the acquires per second over the timeline seconds of r lying wholly in
// [from, to], and how many seconds that is (0: none to judge by).
func Rate(r report.Result, from, to float64) (rate float64, seconds int) {
	var n uint64
	var span float64
	for i, s := range r.Timeline {
		begin := s.TS - 1
		if i > 0 {
			begin = r.Timeline[i-1].TS
		}
		if begin >= from && s.TS <= to {
			n, span, seconds = n+s.Acquired, span+s.TS-begin, seconds+1
		}
	}
	if span == 0 {
		return 0, 0
	}
	return float64(n) / span, seconds
}

func logResults(t testing.TB, rs []report.Result) {
	t.Helper()
	for _, r := range rs {
		t.Logf("%s %s: %d acquired (%.0f/s), %d timeouts, %d errors, verdict %q, safety %+v, requests/acq %.1f, cpu µs/acq %.0f, renewals %d, events %+v, notes %q",
			r.Strategy, r.Label, r.Acquired, r.AcquireRate, r.Timeouts, r.Errors, r.Verdict, r.Safety, r.Redis.CommandsPerAcquire, r.Redis.CPUUSPerAcquire, r.Renewals, r.Events, r.Notes)
	}
}

// Main is a service package's TestMain: when installed, it spawns one server for the whole
// package with spawn (given a minute), stores it in *shared for the tests, runs them, and
// stops the server before the process exits; a server that does not start fails the
// package. Not installed, the tests run with *shared nil and skip (or fail under CI=1).
func Main[C interface{ Close() }](m *testing.M, installed bool, what string, spawn func(context.Context) (C, error), shared *C) {
	code := func() int {
		if installed {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			c, err := spawn(ctx)
			if err != nil {
				fmt.Fprintf(os.Stderr, "spawn %s: %v\n", what, err)
				return 1
			}
			defer c.Close()
			*shared = c
		}
		return m.Run()
	}()
	os.Exit(code)
}
