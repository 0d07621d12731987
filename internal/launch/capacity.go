package launch

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/workload"
)

// Capacity runs the capacity search of the plan's phases: each step in this process, or
// with --procs across the fleet's processes, judged on their merged result. Each step is
// said above the status line as it finishes, unless --quiet.
func (r *Run) Capacity(slo workload.SLO, ramp workload.Ramp) ([]report.Capacity, []report.Result, error) {
	var onStep func(string, report.CapacityStep)
	if !r.Plan.Quiet {
		onStep = r.sayStep
	}
	if r.fleet == nil {
		return workload.Capacity(r.Ctx, r.Plan.Config, r.Backend(), r.Engine(), slo, ramp, onStep)
	}
	return workload.CapacityWith(r.Ctx, r.Plan.Config, r.fleetStep, slo, ramp, onStep)
}

// sayStep says a capacity step of strategy as it finishes.
func (r *Run) sayStep(strategy string, st report.CapacityStep) {
	verdict := "PASS"
	if !st.Pass {
		verdict = "FAIL: " + st.Reason
	}
	r.Progress.Say(fmt.Sprintf("%s %-6s offered %8s/s  achieved %8s/s  p99 %8s  Redis CPU %5.1f%%  %s",
		strategy, st.Stage, report.FormatRate(st.Offered), report.FormatRate(st.Achieved),
		report.FormatUS(float64(st.P99US)), st.RedisCPUPercent, verdict))
}

// fleetStep runs a capacity step in every process of the fleet: each runs the phase with
// its share of the step's rate for the step's window, and the step is the merge of theirs.
func (r *Run) fleetStep(ctx context.Context, phase int, sub workload.Config) ([]report.Result, error) {
	ph := sub.Phases[0]
	extra := []string{"--rate=" + strconv.FormatFloat(ph.Rate, 'f', -1, 64),
		"--duration=" + sub.Duration.String(), "--warmup=" + max(sub.Warmup, 0).String()}
	merged, err := r.fleet.Step(ctx, phase, extra)
	if err == nil && r.fleet.Interrupted() {
		err = context.Canceled // the search stops here; the report says what ran
	}
	if merged == nil || len(merged.Results) == 0 {
		if err == nil {
			err = errors.New("--procs: the processes of a capacity step reported no result")
		}
		return nil, err
	}
	for i := range merged.Results {
		merged.Results[i].Label = ph.Label // the step's, as a step run here is named
	}
	return merged.Results, err
}
