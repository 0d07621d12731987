package main

import (
	"io"

	"github.com/lockbench/lockbench/internal/launch"
	"github.com/lockbench/lockbench/report"
)

const runSynopsis = `Drives each strategy, one phase at a time, with many workers contending for the same keys,
and reports acquires per second, acquire and handoff latency percentiles, Redis commands and
CPU per acquire, fairness, and what an independent oracle saw of mutual exclusion.

Without --redis, lockbench spawns the redis-server topology the strategies need on free
loopback ports and stops it afterwards; without redis-server installed, it embeds an
in-process fake and says so.

Examples:
  lockbench run --profile quickstart
  lockbench run --strategy token,fenced --workers 1000 --duration 5s
  lockbench run --strategy all --keys 1000 --key-dist zipf:1.2 --hold exp:2ms --format json
  lockbench run --strategy token --ttl 500ms --hold 800ms --watchdog auto
  lockbench run --strategy set-nx-del,token --fault holder-pause:p=0.05,d=600ms --ttl 500ms
  lockbench run --redis 10.0.0.5:6379 --strategy token --rate 5000 --wait pubsub --hdr-dir ./hdr`

func runCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("run [flags]", runSynopsis, stdout)
	f := loadFlags{launch.Request{Command: "run"}}
	f.bind(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	p, err := launch.NewPlan(&f.Request)
	if err != nil {
		return err
	}
	r, err := launch.Start(p, stdout, stderr)
	if err != nil {
		return err
	}
	defer r.Close()
	sum := r.Summary(report.KindRun)
	return r.Finish(sum, r.Run(sum), stdout)
}
