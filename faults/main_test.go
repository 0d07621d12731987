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
	w := procstalls.Start(10*time.Millisecond, 250*time.Millisecond)
	code := m.Run()
	if s := w.Stop(); code != 0 {
		fmt.Fprintf(os.Stderr, "faults: the test process stalled (250ms or more without running): %s\n", procstalls.Format(s))
	}
	os.Exit(code)
}
