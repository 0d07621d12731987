package launch

import (
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/workload"
)

// A start-up that lasts more than a second is shown on stderr also when it is not a
// terminal, as one line, ended also when the run is interrupted during it; a quick one is
// not shown at all.
func TestStartUpLine(t *testing.T) {
	var b strings.Builder
	p := &Line{w: &b}
	at := func(started int, elapsed time.Duration, done bool) {
		p.startUp(workload.StartUp{Phase: 1, Phases: 1, Strategy: "token", Workers: 1000000, Started: started, Elapsed: elapsed, Done: done})
	}
	at(1000000, 300*time.Millisecond, true)
	if b.String() != "" {
		t.Errorf("a start-up of 300ms shown: %q", b.String())
	}
	at(400000, time.Second, false)
	at(800000, 2*time.Second, false)
	at(1000000, 2300*time.Millisecond, true)
	if want := "[1/1 token] starting 1000000 workers… done in 2.3s\n"; b.String() != want {
		t.Errorf("off a terminal: %q, want %q", b.String(), want)
	}
	p.endStartUp() // the run ends: nothing left open
	// Interrupted during the start-up: the line ends before the error that follows it.
	b.Reset()
	at(400000, time.Second, false)
	p.endStartUp()
	if want := "[1/1 token] starting 1000000 workers… cut short\n"; b.String() != want {
		t.Errorf("interrupted off a terminal: %q, want %q", b.String(), want)
	}
}
