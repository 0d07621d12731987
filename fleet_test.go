package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/proc"
	"github.com/lockbench/lockbench/internal/redistest"
)

// The fleet's children run the lockbench binary (the test binary is not lockbench), so the
// parent is that binary too.

func TestProcsBadInputExit2(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		mention string
	}{
		{[]string{"run", "--procs", "0"}, "--procs 0"},
		{[]string{"run", "--procs", "-1"}, "--procs -1"},
		{[]string{"run", "--procs", "5", "--workers", "4"}, "more processes than workers"},
		{[]string{"run", "--procs", "2", "--node", "1/2", "--barrier", "b"}, "--procs and --node"},
		{[]string{"run", "--procs", "2", "--fault", "kill:node=0,at=1s"}, "node faults"},
	} {
		code, _, stderr := cli(append(tc.args, "--redis", "127.0.0.1:1")...)
		if code != exitUsage || !strings.Contains(stderr, tc.mention) || strings.Count(strings.TrimSpace(stderr), "\n") > 1 {
			t.Errorf("%v: exit %d, stderr %q; want exit 2, one line mentioning %q", tc.args, code, stderr, tc.mention)
		}
	}
}

// A lease shorter than the hold lets a second holder in; with one worker per process, only
// the cross-process check can see it.
func TestE2EProcsSeesOverlapsBetweenProcesses(t *testing.T) {
	t.Parallel()
	redistest.Require(t)
	s, code, stderr := runBinaryJSON(t, "run", "--procs", "3", "--workers", "3", "--keys", "1", "--strategy", "token",
		"--ttl", "100ms", "--hold", "250ms", "--duration", "2s", "--warmup", "0s")
	if s == nil {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	r := s.Results[0]
	cp := r.Safety.CrossProcess
	if cp == nil || cp.Processes != 3 || cp.Overlaps == 0 {
		t.Fatalf("cross-process check %+v; want 3 processes with overlaps", cp)
	}
	if r.Safety.Overlaps != cp.Overlaps {
		t.Errorf("each process has one worker, yet the processes' own oracles saw %d overlaps beside the %d between them", r.Safety.Overlaps-cp.Overlaps, cp.Overlaps)
	}
	if !strings.HasPrefix(r.Verdict, "UNSAFE") || r.Workers != 3 {
		t.Errorf("verdict %q over %d workers; want UNSAFE over 3", r.Verdict, r.Workers)
	}
}

// The parent dies by SIGKILL mid-run: its children, and the redis-server it spawned, go
// with it.
func TestE2EProcsChildrenDieWithTheParent(t *testing.T) {
	t.Parallel()
	redistest.Require(t)
	p := startBinary(t, "run", "--procs", "2", "--workers", "4", "--duration", "1m", "--warmup", "0s", "--live", "-", "-q")
	p.awaitLive(t) // the fleet's first second: both children run
	kids := children(p.cmd.Process.Pid)
	if lockbenchKids(kids) != 2 {
		t.Fatalf("the parent did not start 2 children: %s; stderr %s", describeProcs(kids), p.stderr.String())
	}
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-p.exited
	// They are not this process's children: nothing to wait on but their state.
	if !waitUntil(2*time.Minute, func() bool { return !anyAlive(kids) }) {
		left := describeProcs(kids)
		for _, pid := range kids {
			if p, err := os.FindProcess(pid); err == nil {
				_ = p.Kill()
			}
		}
		t.Fatalf("after SIGKILL of the parent, still running: %s", left)
	}
}

func lockbenchKids(pids []int) int {
	n := 0
	for _, pid := range pids {
		if line, err := proc.CommandLine(pid); err == nil && strings.Contains(line, "--procs-child") {
			n++
		}
	}
	return n
}

func anyAlive(pids []int) bool {
	for _, pid := range pids {
		if st := proc.State(pid); st != 0 && st != 'Z' {
			return true
		}
	}
	return false
}

// With --redis the children reach Redis themselves: one that cannot is the run's error.
func TestE2EProcsChildErrorIsTheRunsError(t *testing.T) {
	t.Parallel()
	redistest.Require(t)
	port, err := proc.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	addr := "127.0.0.1:" + strconv.Itoa(port) // nothing listens there
	p := startBinary(t, "run", "--procs", "2", "--workers", "2", "--redis", addr,
		"--connect-timeout", "2s", "--duration", "1s", "--warmup", "0s", "-q")
	if !p.wait(2 * time.Minute) {
		t.Fatalf("still running after 2 minutes: %s", p.stderr.String())
	}
	if exitStatus(p.err) != exitFailure {
		t.Fatalf("exit %v; want 1. stderr: %s", p.err, p.stderr.String())
	}
	if msg := p.stderr.String(); !strings.Contains(msg, "of the --procs fleet failed") || !strings.Contains(msg, addr) {
		t.Errorf("stderr %q; want the failed process and its error naming %s", msg, addr)
	}
}

// fair queues its waiters in Redis, whichever process they are in: three processes share a
// hot key evenly, and nobody overlaps. A process the machine does not run for a while
// queues its workers again late and misses turns meanwhile (the others' workers are in the
// queue): at load 30 three processes shared a 2 s window at Jain 0.84. The window is 5 s,
// which such stalls are a smaller part of, after 1 s of warm-up.
func TestE2EProcsFairIsFairAcrossProcesses(t *testing.T) {
	t.Parallel()
	redistest.Require(t)
	s, code, stderr := runBinaryJSON(t, "run", "--procs", "3", "--workers", "30", "--keys", "1", "--strategy", "fair",
		"--wait", "pubsub", "--hold", "1ms", "--duration", "5s", "--warmup", "1s")
	if s == nil {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	r := s.Results[0]
	p := r.Fairness.Processes
	if p == nil || p.Count != 3 || p.Jain < 0.9 || p.Starved != 0 {
		t.Fatalf("fairness across processes %+v; want 3 processes, Jain >= 0.9, none starved", p)
	}
	if r.Verdict != "safe" || r.Safety.CrossProcess == nil || r.Safety.CrossProcess.Overlaps != 0 {
		t.Errorf("verdict %q, cross-process check %+v; want safe with no overlap", r.Verdict, r.Safety.CrossProcess)
	}
}

// The live view of a fleet sums its processes: --live writes one line per second for the
// whole fleet, whose acquires add up to the merged report's.
func TestE2EProcsLiveSumsTheProcesses(t *testing.T) {
	t.Parallel()
	redistest.Require(t)
	live := filepath.Join(t.TempDir(), "live.ndjson")
	s, code, stderr := runBinaryJSON(t, "run", "--procs", "2", "--workers", "4", "--keys", "8", "--strategy", "token",
		"--duration", "2s", "--warmup", "0s", "--live", live)
	if s == nil {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(live)
	if err != nil {
		t.Fatal(err)
	}
	var sum uint64
	lines := 0
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var l struct {
			Acquires uint64 `json:"acquires"`
		}
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatalf("live line %q: %v", line, err)
		}
		sum += l.Acquires
		lines++
	}
	if lines == 0 || lines > 4 || sum != s.Results[0].Acquired {
		t.Errorf("%d live lines summing to %d acquires; want about one a second for the fleet, summing to the report's %d", lines, sum, s.Results[0].Acquired)
	}
}

// capacity --procs: each step runs in every process and is judged on their merged result,
// checked across the processes; the answer is one per strategy, as without --procs.
func TestE2ECapacityProcsJudgesTheMergedStep(t *testing.T) {
	t.Parallel()
	redistest.Require(t)
	s, code, stderr := runBinaryJSON(t, "capacity", "--procs", "2", "--strategy", "token", "--workers", "2", "--keys", "8",
		"--hold", "10ms", "--slo", "p99=1s,timeouts=50%", "--start", "100", "--factor", "4", "--step-duration", "300ms", "--warmup", "0s")
	if s == nil {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if len(s.Capacity) != 1 || len(s.Capacity[0].Steps) < 2 || len(s.Results) != len(s.Capacity[0].Steps) {
		t.Fatalf("capacity %+v over %d results; want one answer, each of its 2 or more steps a result", s.Capacity, len(s.Results))
	}
	for i, r := range s.Results {
		st := s.Capacity[0].Steps[i]
		if cp := r.Safety.CrossProcess; cp == nil || cp.Processes != 2 {
			t.Errorf("step %d (%s): cross-process check %+v; want the merge of 2 processes", i, r.Label, cp)
		}
		if !strings.HasPrefix(r.Label, st.Stage+" ") || st.Offered != r.OfferedRate {
			t.Errorf("step %d: result %q offering %.1f/s, step %s offering %.1f/s; want the step's own", i, r.Label, r.OfferedRate, st.Stage, st.Offered)
		}
	}
}
