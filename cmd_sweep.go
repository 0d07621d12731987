package main

import (
	"io"
	"strings"

	"github.com/lockbench/lockbench/internal/cmdline"
	"github.com/lockbench/lockbench/internal/launch"
	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/workload"
)

var sweepSynopsis = `Runs one phase per value of one parameter, for each strategy, and derives recommendations
from the results: the smallest ttl without overlaps under the configured faults, what each
watchdog interval costs in renewals, which wait policy has the lowest tail, where throughput
peaks. Every run flag applies; --param names what varies.

Parameters: ` + strings.Join(workload.SweepParams, ", ") + `.

Examples:
  lockbench sweep --param ttl=200ms,1s,5s --fault holder-pause:p=0.05,d=600ms --strategy token
  lockbench sweep --param ttl=500ms,2s,10s --fault holder-crash:p=0.05 --fault process-pause:p=0.05,d=1s --max-blocked 5s
  lockbench sweep --param watchdog=off,100ms,auto --ttl 1s --hold uniform:500ms..1500ms
  lockbench sweep --param wait=spin:1ms,backoff,pubsub --workers 200
  lockbench sweep --param workers=10,100,1000 --keys 1000 --plot sweep.png`

func sweepCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("sweep --param NAME=V1,V2,... [flags]", sweepSynopsis, stdout)
	f := loadFlags{launch.Request{Command: "sweep"}}
	f.bind(fs)
	param := new(workload.SweepParam)
	fs.Var(param, "param", "the parameter to vary and its values: NAME=V1,V2,...")
	maxBlocked := fs.Duration("max-blocked", 0, "ttl/watchdog sweeps: the longest a holder that died (holder-crash) may keep its key from everyone; the answer must meet it and stay safe (0 = no such objective)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if param.Spec == "" {
		return usageErrorf("--param is required, e.g. --param ttl=200ms,1s,5s")
	}
	name, values, err := workload.ParseSweep(param.Spec)
	if err != nil {
		return err
	}
	if err := workload.CheckSweepGiven(name, param.Spec, cmdline.Given(fs)); err != nil {
		return err
	}
	opts := workload.SweepOptions{MaxBlocked: *maxBlocked}
	if err := opts.Validate(name); err != nil {
		return err
	}
	f.Prepare = func(cfg *workload.Config) error { return cfg.Sweep(name, values) }
	p, err := launch.NewPlan(&f.Request)
	if err != nil {
		return err
	}
	r, err := launch.Start(p, stdout, stderr)
	if err != nil {
		return err
	}
	defer r.Close()
	sum := r.Summary(report.KindSweep)
	sum.Sweep = &report.Sweep{Param: name, Values: values}
	runErr := r.Run(sum)
	if runErr == nil {
		sum.Recommendations = workload.RecommendWith(name, sum.Results, opts)
	}
	return r.Finish(sum, runErr, stdout)
}
