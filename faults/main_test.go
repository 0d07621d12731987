package faults_test

import (
	"fmt"
	"os"
	"testing"
	"time"

	procstalls "github.com/lockbench/lockbench/internal/stalls"
)

// TestMain watches the test process for stalls (the whole process not running for 250ms or
// more) and, when a test failed, prints them: these tests time faults against watchdogs and
// kills, and a failure that lines up with a stall of the whole process says the machine, not
// the fault, stopped the clock.
func TestMain(m *testing.M) {
	processStalls = procstalls.Start(10*time.Millisecond, 250*time.Millisecond)
	code := m.Run()
	if s := processStalls.Stop(); code != 0 {
		fmt.Fprintf(os.Stderr, "faults: the test process stalled (250ms or more without running): %s\n", procstalls.Format(s))
	}
	os.Exit(code)
}

var processStalls *procstalls.Watch

// unstalled runs a test's phases again, at most twice more, while the whole test process
// stalled for min or more during them (a busy host: it froze the holders, their leases and
// the faults' timers alike, which is process-pause, not the fault the test applies), and
// returns the last run's result, which the test judges whatever happened.
func unstalled[T any](t *testing.T, min time.Duration, run func() T) T {
	t.Helper()
	for attempt := 1; ; attempt++ {
		from := time.Now()
		r := run()
		stalls := processStalls.Between(from, time.Now(), min)
		if len(stalls) == 0 || attempt == 3 {
			return r
		}
		t.Logf("attempt %d: the test process stalled %s (%s or more) during it; again", attempt, procstalls.Format(stalls), min)
	}
}
