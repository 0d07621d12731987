package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/internal/proc"
	"github.com/lockbench/lockbench/internal/redistest"
	"github.com/lockbench/lockbench/report"
)

// A driver that dies mid-run ends its phase at once, not when the window closes: the
// report of what ran is written, and the run exits 1 with one line naming the driver.
func TestBrokenDriverEndsRun(t *testing.T) {
	t.Parallel()
	redistest.Require(t)
	bin := filepath.Join(t.TempDir(), "testdriver")
	if out, err := exec.Command("go", "build", "-o", bin, "./strategies/driver/testdata/testdriver").CombinedOutput(); err != nil {
		t.Fatalf("build the test driver: %v\n%s", err, out)
	}
	strategy := "driver:" + bin + " null die-after 50"
	code, stdout, stderr := cli("run", "--strategy", strategy+",token", "-w", "4", "-d", "30s", "--warmup", "0", "--format", "json", "-q")
	want := `lockbench run: driver "` + bin + ` null die-after 50" exited (exit status 3); its stderr ends: testdriver: dying as asked`
	if code != exitFailure || strings.TrimSpace(stderr) != want {
		t.Fatalf("exit %d, stderr %q: want 1 and the one line %q", code, stderr, want)
	}
	if err := checkResultSchema([]byte(stdout)); err != nil {
		t.Fatalf("the report breaks the JSON contract: %v", err)
	}
	var s report.Summary
	if err := json.Unmarshal([]byte(stdout), &s); err != nil {
		t.Fatal(err)
	}
	if len(s.Results) != 1 || s.Results[0].Strategy != strategy {
		t.Fatalf("%d results: want the broken phase's alone (no later phase runs)", len(s.Results))
	}
	if r := s.Results[0]; r.DurationS >= 15 || r.Acquired > 50 || r.Source != "testdriver 1 (null)" {
		t.Errorf("the phase ran %.1fs of its 30s window, acquired %d, source %q: want it ended when the driver died, with its source", r.DurationS, r.Acquired, r.Source)
	}
}

// --procs 4 runs a driver per process, each against the run's Redis, and the report merges
// the four processes; every driver is gone when the run is.
func TestProcsRunsADriverPerProcess(t *testing.T) {
	redistest.Require(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "testdriver")
	if out, err := exec.Command("go", "build", "-o", bin, "./strategies/driver/testdata/testdriver").CombinedOutput(); err != nil {
		t.Fatalf("build the test driver: %v\n%s", err, out)
	}
	pids := filepath.Join(dir, "pids")
	if err := os.Mkdir(pids, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TESTDRIVER_PIDDIR", pids)
	s, code, stderr := runBinaryJSON(t, "run", "--procs", "4", "--workers", "8", "--keys", "1", "--hold", "1ms",
		"--strategy", "driver:"+bin+" token", "--duration", "2s", "--warmup", "0s")
	if s == nil || code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	r := s.Results[0]
	if cp := r.Safety.CrossProcess; cp == nil || cp.Processes != 4 || r.Acquired == 0 || r.Verdict != "safe" {
		t.Fatalf("processes %+v, acquired %d, verdict %q: want 4 processes' merged report, acquisitions, safe", r.Safety.CrossProcess, r.Acquired, r.Verdict)
	}
	entries, err := os.ReadDir(pids)
	if err != nil {
		t.Fatal(err)
	}
	addrs, parents := map[string]bool{}, map[string]bool{}
	for _, e := range entries {
		b, _ := os.ReadFile(filepath.Join(pids, e.Name()))
		addr, parent, _ := strings.Cut(strings.TrimSpace(string(b)), " ")
		addrs[addr], parents[parent] = true, true
		pid, _ := strconv.Atoi(e.Name())
		if st := proc.State(pid); st != 0 && st != 'Z' {
			t.Errorf("driver %d (state %c) outlived the run", pid, st)
		}
	}
	// (The engine also builds each strategy once before it runs anything, to check it: a
	// process starts its driver twice, one after the other.)
	if len(parents) != 4 || len(addrs) != 1 {
		t.Errorf("drivers started by %d processes, on %v: want by each of the 4, all on the run's Redis", len(parents), addrs)
	}
}
