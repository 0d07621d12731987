package main

import (
	"fmt"
	"io"

	"github.com/lockbench/lockbench/workload"
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
	var f loadFlags
	f.bind(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	cfg, prof, err := f.resolve()
	if err != nil {
		return err
	}
	if err := f.checkOutput(); err != nil {
		return err
	}
	progress := newProgressLine(stderr, f.quiet)
	ctx, stop := signalContext(progress)
	defer stop()
	s, err := f.open(ctx, &cfg)
	if err != nil {
		return err
	}
	defer s.close()
	if s.conn.Note != "" && f.format != "table" && f.format != "markdown" {
		fmt.Fprintln(stderr, "lockbench: note: "+s.conn.Note) // the table prints it first itself
	}

	sum := f.summary("run", &cfg, prof, s)
	results, runErr := workload.Run(ctx, cfg, s.target(), s.options(progress))
	progress.clear()
	sum.Results = results
	sum.Interrupted = runErr != nil && ctx.Err() != nil
	if runErr != nil && !sum.Interrupted {
		return runErr
	}
	return f.finish(sum, stdout)
}
