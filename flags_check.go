package main

import (
	"github.com/lockbench/lockbench/internal/loadcheck"
	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/workload"
)

// Checks of what the user gave, made before anything runs: a bad value found after a
// 90-second run, or silently replaced by a default, is worse than an error at once.

// checkOutputPaths makes sure the report and its extra files can be written
// (loadcheck.Paths); -o - becomes "" (stdout).
func (f *loadFlags) checkOutputPaths() (err error) {
	f.out, err = loadcheck.Paths{Out: f.out, Live: f.live, Plot: f.plot, HTML: f.html,
		CPUProfile: f.cpuProfile, MemProfile: f.memProfile, HDRDir: f.hdrDir}.Check()
	return err
}

// maxErrors is --max-errors (loadcheck.MaxErrors).
type maxErrors struct{ loadcheck.MaxErrors }

// exceeded describes the first result with more errors than allowed, "" when none has.
func (m *maxErrors) exceeded(results []report.Result) string {
	return m.MaxErrors.Exceeded(results, resultName)
}

// checkNodeTarget refuses a multi-process run (--node I/N, N > 1) on a Redis that
// lockbench would spawn for this process alone (redis.Flags.CheckShared).
func (f *loadFlags) checkNodeTarget(cfg *workload.Config) error {
	if cfg.Barrier == nil {
		return nil
	}
	return f.redisFlags().CheckShared(f.node, cfg.Barrier.Nodes)
}

// checkServiceFlags refuses a lock service's flags given on the command line in a run where
// no phase runs on that service (loadcheck.ServiceFlags).
func (f *loadFlags) checkServiceFlags(cfg *workload.Config) error {
	return loadcheck.ServiceFlags(f.services, cfg.Phases, f.given)
}
