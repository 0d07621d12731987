package main

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

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
