package driver_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/workload"
)

// reference returns the command of a reference driver in drivers/, skipping the test when
// its runtime or its libraries are missing (failing under CI=1, which scripts/test.sh sets
// after it installed them).
func reference(t *testing.T, kind string) string {
	t.Helper()
	root, err := filepath.Abs("../../drivers")
	if err != nil {
		t.Fatal(err)
	}
	missing := func(what string) {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s: scripts/test.sh installs it", what)
		}
		t.Skipf("%s: run scripts/test.sh, which installs it", what)
	}
	switch kind {
	case "node":
		if _, err := exec.LookPath("node"); err != nil {
			missing("node not found")
		}
		if _, err := os.Stat(filepath.Join(root, "node", "node_modules", "redlock")); err != nil {
			missing("drivers/node/node_modules missing (npm ci in drivers/node)")
		}
		return "node " + filepath.Join(root, "node", "driver.js")
	}
	if err := exec.Command("/usr/bin/python3", "-c", "import redis").Run(); err != nil {
		missing("/usr/bin/python3 cannot import redis (apt-get install python3-redis)")
	}
	return "/usr/bin/python3 " + filepath.Join(root, "python", "redis_lock_driver.py")
}

// Each reference driver runs its library as shipped through the engine: on a hot key it
// keeps mutual exclusion, and its hello names the library's version.
func TestReferenceDriversRun(t *testing.T) {
	node, python := reference(t, "node"), reference(t, "python")
	names := []string{node + " redlock", node + " redlock-extend", node + " mutex", node + " semaphore", python}
	var phases []workload.Phase
	for _, n := range names {
		phases = append(phases, phase("driver:"+n, nil))
	}
	for n, want := range map[string]string{names[0]: "redlock 4.2.0 on redis 3.1.2", names[2]: "redis-semaphore 5.8.0 on ioredis 6.0.0", python: "redis-py 4.3"} {
		if info, err := strategies.Resolve("driver:" + n); err != nil || !strings.HasPrefix(info.Source, want) {
			t.Errorf("%s: source %q (%v): want the library's version %q", n, info.Source, err, want)
		}
	}
	rs := run(t, spawn(t), config(time.Second, phases...))
	for _, r := range rs {
		if r.Acquired == 0 || r.Errors != 0 || r.Verdict != "safe" {
			t.Errorf("%s: acquired %d, errors %d, verdict %q: want acquisitions, no error, safe", r.Strategy, r.Acquired, r.Errors, r.Verdict)
		}
	}
}

// redlock without extension and redis-py's Lock are ttl leases that nothing renews: a hold
// that outlives the ttl lets a second holder in, and the oracle says UNSAFE.
func TestReferenceDriversUnsafeUnderHolderPause(t *testing.T) {
	node, python := reference(t, "node"), reference(t, "python")
	mod := func(ph *workload.Phase) {
		ph.Keys, ph.TTL, ph.Faults = 4, strategies.TTLOf(100*time.Millisecond), []string{"holder-pause:p=0.2,d=300ms"}
	}
	rs := run(t, spawn(t), config(2*time.Second, phase("driver:"+node+" redlock", mod), phase("driver:"+python, mod)))
	for _, r := range rs {
		if r.Safety.Overlaps == 0 || !strings.HasPrefix(r.Verdict, report.VerdictUnsafe) {
			t.Errorf("%s: overlaps %d, verdict %q: want UNSAFE", r.Strategy, r.Safety.Overlaps, r.Verdict)
		}
	}
}
