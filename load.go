package main

// The flags every load command (run, sweep, capacity) shares beyond flags.go's, and the
// plan they make: resolved and checked once, before anything starts, then handed to
// package launch, which runs it and never changes it.

import (
	"time"

	"github.com/spf13/pflag"

	"github.com/lockbench/lockbench/internal/fleet"
	"github.com/lockbench/lockbench/internal/launch"
	"github.com/lockbench/lockbench/internal/output"
	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/services/redis"
	"github.com/lockbench/lockbench/session"
	"github.com/lockbench/lockbench/workload"
)

// liveFlags are the live-export flags (launch.Live).
type liveFlags struct {
	metricsAddr string
	live        string
}

func (f *liveFlags) bind(fs *pflag.FlagSet) {
	fs.StringVar(&f.metricsAddr, "metrics-addr", "", "serve Prometheus/OpenMetrics metrics at http://HOST:PORT/metrics while running (:9464 on every interface; port 0 picks a free one, printed on stderr)")
	fs.StringVar(&f.live, "live", "", "write one NDJSON line per strategy per second to this file, or - for stdout (the report then goes to --out, or to stderr)")
}

// fleetFlags are the hidden flags a --procs parent gives its children (package fleet).
// --procs itself is a load setting (workload.Settings): the run's in Config.Procs, each
// phase's own in Phase.Procs.
type fleetFlags struct {
	child       bool   // --procs-child: this process is one of a --procs fleet
	childPhases string // --procs-phases FROM:TO: the fleet runs these phases (0-based, end excluded)
}

func (f *fleetFlags) bind(fs *pflag.FlagSet, cfg *workload.Config) {
	bindSetting(fs, "procs", cfg)
	fs.BoolVar(&f.child, "procs-child", false, "internal: this process is one of a --procs fleet")
	fs.StringVar(&f.childPhases, "procs-phases", "", "internal: the phases a --procs fleet runs, FROM:TO")
	_ = fs.MarkHidden("procs-child")
	_ = fs.MarkHidden("procs-phases")
}

// plan resolves the flags — prepare, when set, may then reshape the configuration (a sweep
// turns it into phases) — and checks the faults, the outputs and the fleet, all before
// anything runs. faultWindow is how long a phase's measured window is when it is not
// --duration (capacity's steps; 0 otherwise): scheduled faults must fire within it.
func (f *loadFlags) plan(prepare func(*workload.Config) error, faultWindow time.Duration) (*launch.Plan, error) {
	if f.child {
		if err := fleet.TakeSecrets(f.fs.Set); err != nil {
			return nil, err
		}
	}
	cfg, prof, err := f.resolve()
	if err != nil {
		return nil, err
	}
	if prepare != nil {
		if err := prepare(&cfg); err != nil {
			return nil, err
		}
	}
	if f.child {
		if err := fleet.TakeShare(&cfg, f.childPhases); err != nil {
			return nil, err
		}
	}
	// The faults are parsed here, once, after prepare has made the final phases.
	window := cfg.Duration
	if faultWindow > 0 {
		window = faultWindow
	}
	faults, err := session.NewPlan(&cfg, window)
	if err != nil {
		return nil, err
	}
	out := output.Options{Format: f.format, HDRDir: f.hdrDir, Plot: f.plot, HTML: f.html,
		FailOnUnsafe: f.failOnUnsafe, MaxErrors: f.maxErrors.exceeded}
	if err := out.Check(); err != nil {
		return nil, err
	}
	if err := f.checkOutputPaths(); err != nil {
		return nil, err
	}
	out.Out = f.out // checked: "-" is stdout, ""
	p := &launch.Plan{Command: f.command, Config: cfg, Profile: prof, Faults: faults, Services: f.services,
		Child: f.child, Output: out, Live: launch.Live{MetricsAddr: f.metricsAddr, File: f.live},
		Quiet: f.quiet, Node: f.node, CPUProfile: f.cpuProfile, MemProfile: f.memProfile}
	if !f.child {
		segs, err := fleet.Segments(cfg.Phases, faults, fleet.Refuse{Node: f.node != "" || f.barrier != "",
			Profiling: f.cpuProfile != "" || f.memProfile != ""})
		if err != nil {
			return nil, err
		}
		if segs != nil {
			p.Fleet = &fleet.Spec{Command: f.command, Given: fleet.Given(f.fs), Segments: segs, Phases: len(cfg.Phases)}
		}
		if err := f.checkNodeTarget(&cfg); err != nil {
			return nil, err
		}
		if err := f.checkServiceFlags(&cfg); err != nil {
			return nil, err
		}
	}
	return p, p.Live.Check()
}

// redisFlags are the flags of the Redis target (--redis, --password, --tls, ...), which
// services/redis registers.
func (f *loadFlags) redisFlags() *redis.Flags { return redis.FlagsOf(f.services) }

// resultName names a result as its table row does (--max-errors' message).
func resultName(r report.Result) string { return output.ResultName(r) }
