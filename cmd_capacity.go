package main

import (
	"io"
	"time"

	"github.com/lockbench/lockbench/internal/cmdline"
	"github.com/lockbench/lockbench/internal/launch"
	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/workload"
)

const capacitySynopsis = `Finds, per strategy, the highest rate of lock acquisitions this Redis sustains within a
latency objective: an open-loop ramp (--start, multiplied by --factor each step) until a step
fails, then a bisection between the last passing and the first failing rate. A step fails when
acquire p99 (from the intended start) or the timeout share breaks the SLO, or when it
takes less than 98% of the arrivals it offered (counted whole: 7 at 15.6/s for 500ms). Each
step prints as it finishes; the ramp sets each step's rate and time (--start, --factor,
--step-duration), so --rate and --duration are refused.

Examples:
  lockbench capacity --strategy token --slo p99=5ms
  lockbench capacity --strategy token,fenced --slo p99=2ms,timeouts=0.1% --keys 10000 --workers 500
  lockbench capacity --strategy token --slo p99=5ms --start 5000 --factor 1.5 --plot capacity.png`

func capacityCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("capacity --slo p99=DUR[,timeouts=P%] [flags]", capacitySynopsis, stdout)
	// With --procs each step is a run of one phase in every process (fleet.Step), and
	// capacity's own flags are not run's.
	f := loadFlags{launch.Request{Command: "capacity", ChildCommand: "run",
		ChildDrop: []string{"slo", "start", "factor", "step-duration", "warmup"}}}
	f.bind(fs)
	var ramp workload.Ramp
	slo := fs.String("slo", "", "the objective a step must meet: p99=DURATION[,timeouts=PERCENT%] (timeouts default 0.1%)")
	fs.Float64Var(&ramp.Start, "start", 1000, "first offered rate, acquisitions/s")
	fs.Float64Var(&ramp.Factor, "factor", 2, "each ramp step offers this many times the last")
	fs.DurationVar(&ramp.StepDuration, "step-duration", 3*time.Second, "measured time per step (at least "+workload.MinDuration.String()+")")
	fs.Lookup("duration").Usage = "(capacity uses --step-duration)"
	fs.Lookup("warmup").DefValue = workload.CapacityWarmup.String()
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *slo == "" {
		return usageErrorf("--slo is required, e.g. --slo p99=5ms")
	}
	if err := ramp.Settle(&f.Config, cmdline.Given(fs)); err != nil { // the ramp's rates and steps, capacity's warm-up
		return err
	}
	objective, err := workload.ParseSLO(*slo)
	if err != nil {
		return err
	}
	f.FaultWindow = ramp.StepDuration // scheduled faults fire within a step
	p, err := launch.NewPlan(&f.Request)
	if err != nil {
		return err
	}
	r, err := launch.Start(p, stdout, stderr)
	if err != nil {
		return err
	}
	defer r.Close()
	sum := r.Summary(report.KindCapacity)
	answers, results, runErr := r.Capacity(objective, ramp)
	sum.Capacity, sum.Results = answers, results
	return r.Finish(sum, runErr, stdout)
}
