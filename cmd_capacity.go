package main

import (
	"fmt"
	"io"
	"time"

	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/workload"
)

const capacitySynopsis = `Finds, per strategy, the highest rate of lock acquisitions this Redis sustains within a
latency objective: an open-loop ramp (--start, multiplied by --factor each step) until a step
fails, then a bisection between the last passing and the first failing rate. A step fails when
acquire p99 (from the intended start) or the timeout share breaks the SLO, or when it
achieves less than 98% of the offered rate. Each step prints as it finishes.

Examples:
  lockbench capacity --strategy token --slo p99=5ms
  lockbench capacity --strategy token,fenced --slo p99=2ms,timeouts=0.1% --keys 10000 --workers 500
  lockbench capacity --strategy token --slo p99=5ms --start 5000 --factor 1.5 --plot capacity.png`

func capacityCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("capacity --slo p99=DUR[,timeouts=P%] [flags]", capacitySynopsis, stdout)
	f := loadFlags{command: "capacity"}
	f.bind(fs)
	var ramp workload.Ramp
	slo := fs.String("slo", "", "the objective a step must meet: p99=DURATION[,timeouts=PERCENT%] (timeouts default 0.1%)")
	fs.Float64Var(&ramp.Start, "start", 1000, "first offered rate, acquisitions/s")
	fs.Float64Var(&ramp.Factor, "factor", 2, "each ramp step offers this many times the last")
	fs.DurationVar(&ramp.StepDuration, "step-duration", 3*time.Second, "measured time per step (at least "+workload.MinDuration.String()+")")
	fs.Lookup("duration").Usage = "(capacity uses --step-duration)"
	fs.Lookup("warmup").DefValue = "500ms"
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *slo == "" {
		return usageErrorf("--slo is required, e.g. --slo p99=5ms")
	}
	if ramp.Start <= 0 {
		return usageErrorf("invalid --start %v: want the first offered rate, acquisitions/s > 0", ramp.Start)
	}
	if ramp.Factor <= 1 {
		return usageErrorf("invalid --factor %v: want more than 1, each step offering more than the last", ramp.Factor)
	}
	if ramp.StepDuration < workload.MinDuration {
		// Each step is a phase's measured window (--duration's bound).
		return usageErrorf("invalid --step-duration %s: want a duration of at least %s (a shorter step holds too few round trips to measure), e.g. 3s", ramp.StepDuration, workload.MinDuration)
	}
	f.faultWindow = ramp.StepDuration
	f.cfg.Duration = ramp.StepDuration // what each step measures, as the report's header says
	objective, err := workload.ParseSLO(*slo)
	if err != nil {
		return err
	}
	if !fs.Changed("warmup") {
		f.cfg.Warmup = 500 * time.Millisecond
	}
	l, err := f.startRun(stdout, stderr, nil)
	if err != nil {
		return err
	}
	defer l.close()
	sum := l.summary(&f, report.KindCapacity)
	onStep := func(strategy string, st report.CapacityStep) {
		verdict := "PASS"
		if !st.Pass {
			verdict = "FAIL: " + st.Reason
		}
		l.progress.say(fmt.Sprintf("%s %-6s offered %8s/s  achieved %8s/s  p99 %8s  Redis CPU %5.1f%%  %s",
			strategy, st.Stage, report.FormatRate(st.Offered), report.FormatRate(st.Achieved),
			report.FormatUS(float64(st.P99US)), st.RedisCPUPercent, verdict))
	}
	if f.quiet {
		onStep = nil
	}
	answers, results, runErr := workload.Capacity(l.ctx, l.cfg, l.s.Backend(), l.progress.engine(l.s.Options(l.progress.update)), objective, ramp, onStep)
	sum.Capacity, sum.Results = answers, results
	return f.reportRun(l, sum, runErr, stdout)
}
