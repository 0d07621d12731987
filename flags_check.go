package main

import (
	"os"
	"runtime"
	"strings"

	"github.com/lockbench/lockbench/internal/loadcheck"
	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/services"
	"github.com/lockbench/lockbench/workload"
)

// Checks of what the user gave, made before anything runs: a bad value found after a
// 90-second run, or silently replaced by a default, is worse than an error at once.

// checkSetting checks the load setting named name (a flag name) of cfg by its declared
// bound (workload.Settings); nil for other names.
func checkSetting(name string, cfg *workload.Config) error {
	if s, ok := workload.LookupSetting(name); ok {
		return s.Check(cfg)
	}
	return nil
}

// checkCommandLine checks every load setting given on the command line, before a profile
// adds its own.
func (f *loadFlags) checkCommandLine() error {
	for _, s := range workload.Settings {
		if f.cmdline[s.Name] {
			if err := s.Check(&f.cfg); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkOutputPaths makes sure the report and its extra files can be written, and that no
// two of them are one file (loadcheck.Outputs).
func (f *loadFlags) checkOutputPaths() error {
	if f.out == "-" {
		if f.live == "-" {
			return usageErrorf("--live - and -o - both want stdout, where the NDJSON lines and the report would interleave; give the report a file (-o FILE), or drop -o - (with --live - the report goes to stderr)")
		}
		f.out = "" // -o - is stdout, as for most tools
	}
	files := []loadcheck.Output{{Flag: "out", Path: f.out}, {Flag: "plot", Path: f.plot}, {Flag: "html", Path: f.html}, {Flag: "cpuprofile", Path: f.cpuProfile}, {Flag: "memprofile", Path: f.memProfile}}
	if f.live != "-" {
		files = append(files, loadcheck.Output{Flag: "live", Path: f.live})
	}
	return loadcheck.Outputs(files, f.hdrDir)
}

// maxErrors is --max-errors (loadcheck.MaxErrors).
type maxErrors struct{ loadcheck.MaxErrors }

// exceeded describes the first result with more errors than allowed, "" when none has.
func (m *maxErrors) exceeded(results []report.Result) string {
	return m.MaxErrors.Exceeded(results, resultName)
}

// checkExtra checks what the settings' bounds cannot: settings that make no sense together and
// list flags, once the profile has been applied.
func (f *loadFlags) checkExtra(cfg *workload.Config) error {
	if strings.TrimSpace(f.strategy) == "" {
		return usageErrorf("invalid --strategy %q: name at least one strategy (see 'lockbench strategies'), or all", f.strategy)
	}
	if f.command == "run" {
		if err := services.CheckList("strategy", f.strategy, false); err != nil {
			return err
		}
	}
	if err := cfg.CheckMaxInflight(f.command == "capacity"); err != nil { // capacity's ramp sets a rate per step
		return err
	}
	if err := f.services.Check(); err != nil {
		return err
	}
	// 'all' names no strategy itself: a strategy of it that waits its own way (spin-lock)
	// ignores --wait rather than refusing the run.
	if err := workload.CheckApplies(cfg.Phases, f.strategy == "all" && !f.profileNamesStrategies()); err != nil {
		return err
	}
	// Counts this machine cannot hold (workload.CheckMemory declares what a worker and a
	// key cost), or would take minutes to start (workload.CheckStartUp).
	if err := workload.CheckMemory(cfg.Phases, workload.AvailableMemory()); err != nil {
		return err
	}
	return workload.CheckStartUp(cfg.Phases, runtime.GOMAXPROCS(0))
}

// profileNamesStrategies reports whether the run's phases come from a profile's own phases,
// each naming its strategy.
func (f *loadFlags) profileNamesStrategies() bool {
	return f.profile != "" && !f.cmdline["strategy"] && f.hasProfilePhases
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

// barrierOf is the barrier of a multi-machine run (--node, --barrier), nil for none.
func (f *loadFlags) barrierOf() (*workload.Barrier, error) {
	if f.node == "" && f.barrier == "" {
		return nil, nil
	}
	if f.node == "" || f.barrier == "" {
		return nil, usageErrorf("--node and --barrier go together: --node I/N --barrier NAME")
	}
	node, err := autoNode(f.node, os.LookupEnv)
	if err != nil {
		return nil, err
	}
	f.node = node // the report names the node, not "auto"
	i, n, err := workload.ParseNode(f.node)
	if err != nil {
		return nil, err
	}
	return &workload.Barrier{Name: f.barrier, Node: i, Nodes: n}, nil
}
