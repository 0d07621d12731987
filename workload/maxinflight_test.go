package workload

import (
	"strings"
	"testing"
)

// --max-inflight bounds an open loop: refused in a run without a rate, its own or a
// phase's, unless the command ramps a rate per step (capacity), which the CLI used to
// refuse it for.
func TestCheckMaxInflight(t *testing.T) {
	closed := Config{Strategies: []string{"token"}}
	closed.MaxInflight = 10
	if err := closed.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := closed.CheckMaxInflight(false); err == nil || !strings.HasPrefix(err.Error(), "invalid --max-inflight 10: it bounds the open loop") {
		t.Errorf("closed loop: %v; want --max-inflight refused", err)
	}
	if err := closed.CheckMaxInflight(true); err != nil {
		t.Errorf("a ramp's open loop (capacity): %v; want it taken", err)
	}
	phase := closed
	phase.Phases = []Phase{closed.Phases[0]}
	phase.Phases[0].Rate = 100
	open := closed
	open.Rate = 100
	for _, c := range []Config{phase, open} {
		if err := c.CheckMaxInflight(false); err != nil {
			t.Errorf("an open loop (run rate %v, phase rate %v): %v; want it taken", c.Rate, c.Phases[0].Rate, err)
		}
	}
	if err := (&Config{}).CheckMaxInflight(false); err != nil {
		t.Errorf("not given: %v", err)
	}
}
