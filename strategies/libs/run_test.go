package libs_test

import (
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/workload"
)

// Through the engine, on one hot key with 20 workers, every library keeps mutual exclusion:
// 0 overlaps, 0 lost leases, a safe verdict, with its Redis cost measured. redsync-redlock
// runs over the redlock topology's masters, whose cost is summed over all of them.
//
// Half a second per library: hundreds of contended acquires each, and the engine runs a
// core flat out under the race detector for as long as a window lasts (seven 1 s windows
// were some 9 CPU-seconds).
func TestContendedRunsAreSafe(t *testing.T) {
	conn := spawn(t, "single")
	var phases []workload.Phase
	for _, name := range libNames {
		phases = append(phases, phase(name, nil))
	}
	const window = 500 * time.Millisecond
	rs := run(t, conn, config(window, phases...))
	rs = append(rs, run(t, spawn(t, "redlock"), config(window, phase("redsync-redlock", nil)))...)
	for _, r := range rs {
		if r.Acquired == 0 || r.Safety.Overlaps != 0 || r.Safety.LostLeases != 0 || r.Verdict != "safe" {
			t.Errorf("%s: acquired %d, safety %+v, verdict %q: want acquisitions and safe", r.Strategy, r.Acquired, r.Safety, r.Verdict)
		}
		if r.Errors != 0 {
			t.Errorf("%s: %d errors: %v", r.Strategy, r.Errors, r.Notes)
		}
		if !r.Redis.Measured || r.Redis.CommandsPerAcquire < 2 {
			t.Errorf("%s: Redis cost %+v: want measured, at least a lock and an unlock per acquire", r.Strategy, r.Redis)
		}
	}
	// redislock's default is one attempt: on a hot key most acquires fail at once and the
	// worker tries again at once, so it spends far more commands per acquire than the
	// retrying variant that sleeps 100ms between attempts.
	byName := map[string]float64{}
	for _, r := range rs {
		byName[r.Strategy] = r.Redis.CommandsPerAcquire
	}
	if byName["redislock"] < 3*byName["redislock-linear"] {
		t.Errorf("redislock (NoRetry) %.1f commands per acquire, redislock-linear %.1f: want the try-lock's retry storm to cost several times more",
			byName["redislock"], byName["redislock-linear"])
	}
}

// A process pause (p=0.3, 1s) freezes a holder after its 250ms hold, and its renewals with
// it, on a 600ms lease: none of the libraries fences, so each lets a second holder in — the
// pause outlives the ttl and no renewal reaches Redis. rueidislock renews by itself and
// redsync here with lockbench's watchdog: both froze with the holder, as a stop-the-world
// pause freezes them (rueidislock's every 300ms, after these holds: its pauses are what
// TestFrozenRenewalLetsTheLeaseLapse shows). Every phase reports a verdict, and it is UNSAFE.
func TestProcessPauseIsUnsafe(t *testing.T) {
	conn := spawn(t, "single")
	fault := "process-pause:p=0.3,d=1s"
	mod := func(label string, wd strategies.Watchdog) func(*workload.Phase) {
		return func(ph *workload.Phase) {
			ph.Label, ph.Keys, ph.TTL, ph.Hold, ph.Watchdog, ph.Faults = label, 4, strategies.TTLOf(600*time.Millisecond), hold("250ms"), wd, []string{fault}
		}
	}
	off, auto := strategies.Watchdog{}, strategies.Watchdog{Auto: true}
	rs := run(t, conn, config(2500*time.Millisecond,
		phase("redsync", mod("wd=off", off)),
		phase("redsync", mod("wd=auto", auto)),
		phase("redislock-linear", mod("wd=off", off)),
		phase("rueidislock", mod("", off)),
	))
	for _, r := range rs {
		frozen := false
		for _, e := range r.Events {
			frozen = frozen || strings.Contains(e.What, "frozen") && !strings.HasPrefix(e.What, "0 ")
		}
		if !frozen {
			t.Errorf("%s %s: no pause reported: %v", r.Strategy, r.Label, r.Events)
		}
		if r.Verdict == "" || r.Acquired == 0 {
			t.Errorf("%s %s: no verdict (%q) or nothing acquired (%d)", r.Strategy, r.Label, r.Verdict, r.Acquired)
		}
		if r.Safety.Misdeletes != 0 {
			// Every library unlocks by compare-and-delete: a late release deletes nothing
			// but its own lock. A misdelete here is a lease whose validity the adapter
			// reckoned too early (ValidUntil), so that a normal handoff looked like one.
			t.Errorf("%s %s: %d misdeletes by a compare-and-delete unlock", r.Strategy, r.Label, r.Safety.Misdeletes)
		}
		if r.Safety.Overlaps == 0 || !strings.HasPrefix(r.Verdict, "UNSAFE") {
			t.Errorf("%s %s under process-pause d > ttl: verdict %q, safety %+v; want UNSAFE: no fencing, renewals froze", r.Strategy, r.Label, r.Verdict, r.Safety)
		}
	}
	if rs[1].Renewals == 0 {
		t.Errorf("redsync wd=auto: no renewals, so the watchdog was not running (holds of 250ms, renewal every 200ms)")
	}
}
