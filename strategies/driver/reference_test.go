package driver_test

import (
	"errors"
	"fmt"
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

// redlock with its extension running keeps a holder's lock past its ttl for as long as the
// holder holds it (the holder-pause shape); an extension that fails is reported (lost), and
// a lock key that ever vanished while held must have been; abandon stops the extension and
// the key frees within about its ttl. A stop-the-world pause of the driver's process stops
// the extension with it: another process's driver takes the key while the first still
// holds it (process-pause, UNSAFE with two processes).
//
// The extension runs in a node process on a machine that may be starved of CPU: one that
// comes back after the lock's validity fails (redlock then unlocks the key itself). So the
// test does not require every hold to survive: it requires that no hold loses its key
// silently, and that the extension keeps at least one key past three ttls.
func TestRedlockExtendKeepsTheLockUnlessItSaysLost(t *testing.T) {
	node := reference(t, "node")
	o := target(t)
	o.TTL = strategies.TTLOf(100 * time.Millisecond)
	s := build(t, node+" redlock-extend", o)
	ctx := ctxFor(t, 2*time.Minute)
	exists := func(key string) bool {
		n, err := o.Client.Do(ctx, o.Client.B().Exists().Key(key).Build()).AsInt64()
		if err != nil {
			t.Fatalf("EXISTS %s: %v", key, err)
		}
		return n == 1
	}

	kept := 0
	for round := 0; round < 8 && kept < 2; round++ {
		key := fmt.Sprintf("extend-%d", round)
		l, err := s.Acquire(ctx, key, "holder")
		if err != nil {
			t.Fatalf("acquire %s: %v", key, err)
		}
		vanished := time.Time{}
		for end := time.Now().Add(3 * o.TTL.Duration()); time.Now().Before(end) && vanished.IsZero(); {
			if !exists(key) {
				vanished = time.Now()
			}
			time.Sleep(2 * time.Millisecond)
		}
		switch {
		case vanished.IsZero():
			kept++
		default:
			// The extension failed: the driver must say so, and does within a few of its
			// ticks (the next extension finds the lock expired at once).
			select {
			case <-l.Lost():
				t.Logf("round %d: the key vanished %s into the hold, and the driver reported the lease lost (an extension came late on a busy machine)", round, o.TTL.Duration()*3-time.Until(vanished))
			case <-time.After(5 * time.Second):
				t.Fatalf("round %d: the key %s vanished while its holder held it with the extension running, and the driver never reported the lease lost", round, key)
			}
		}
		if err := l.Release(ctx); err != nil && !errors.Is(err, strategies.ErrNotOwner) {
			t.Fatalf("release %s: %v", key, err)
		}
	}
	if kept == 0 {
		t.Fatal("in no round did the extension keep the key through three ttls")
	}

	// Abandon stops the extension: the key frees by its ttl.
	l, err := s.Acquire(ctx, "abandoned", "holder")
	if err != nil {
		t.Fatal(err)
	}
	l.(interface{ Abandon() }).Abandon()
	deadline := time.Now().Add(10 * time.Second)
	for exists("abandoned") {
		if time.Now().After(deadline) {
			t.Fatal("an abandoned lock is still extended 10s later")
		}
		time.Sleep(10 * time.Millisecond)
	}

	// A frozen driver extends nothing: another driver (process) gets the key while the
	// first one's holder still holds it.
	var freeze func() func()
	po := o
	po.Hooks.OnPause = func(f func() func()) { freeze = f }
	paused := build(t, node+" redlock-extend", po)
	other := build(t, node+" redlock-extend", o)
	held, err := paused.Acquire(ctx, "frozen", "a")
	if err != nil {
		t.Fatal(err)
	}
	thaw := freeze()
	got, err := other.Acquire(ctxFor(t, 30*time.Second), "frozen", "b")
	thaw()
	if err != nil {
		t.Fatalf("while the holder's driver was frozen, another driver could not take the key: %v", err)
	}
	_ = got.Release(ctx)
	if err := held.Release(ctx); !errors.Is(err, strategies.ErrNotOwner) {
		t.Errorf("the frozen holder's release: %v; want not the owner (its lock expired and was taken)", err)
	}
}
