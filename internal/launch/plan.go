package launch

import (
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/lockbench/lockbench/faults"
	"github.com/lockbench/lockbench/internal/cmdline"
	"github.com/lockbench/lockbench/internal/fleet"
	"github.com/lockbench/lockbench/internal/loadcheck"
	"github.com/lockbench/lockbench/internal/node"
	"github.com/lockbench/lockbench/internal/output"
	"github.com/lockbench/lockbench/profiles"
	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/services"
	"github.com/lockbench/lockbench/services/redis"
	"github.com/lockbench/lockbench/session"
	"github.com/lockbench/lockbench/workload"
)

// Request is what a load command's flags say, as package main binds them: the values as
// parsed, before a profile fills the flags the command line left alone. NewPlan turns it
// into the Plan, resolved and checked, before anything starts.
type Request struct {
	Command string         // run, sweep or capacity
	Flags   *pflag.FlagSet // the command's flags, parsed: what the command line gave, and where a profile writes

	Config   workload.Config // the load settings' flags (workload.Settings)
	Strategy string          // --strategy
	Profile  string          // --profile
	Faults   []string        // --fault, as given
	Services *services.Bound // the lock services' flags, Redis's first

	Format, Out, HDRDir, Plot, HTML string // the report and its extra files
	Quiet, FailOnUnsafe             bool
	MaxErrors                       loadcheck.MaxErrors // --max-errors

	MetricsAddr, Live string // --metrics-addr, --live (Live)

	Node, Barrier string // --node, --barrier: a multi-process run

	CPUProfile, MemProfile string

	// Child and ChildPhases are a --procs child's hidden flags (--procs-child,
	// --procs-phases FROM:TO).
	Child       bool
	ChildPhases string

	// ChildCommand and ChildDrop, when set, are what a --procs parent tells its children
	// instead of Command, and the command's own flags they do not take (capacity's steps
	// run as runs, without --slo ...).
	ChildCommand string
	ChildDrop    []string

	// Prepare, when set, reshapes the resolved configuration before the faults and the
	// fleet are planned (a sweep turns it into its phases).
	Prepare func(*workload.Config) error
	// FaultWindow is how long a phase's measured window is when it is not --duration
	// (capacity's steps; 0 otherwise): scheduled faults must fire within it.
	FaultWindow time.Duration

	onCommandLine func(name string) (string, bool) // taken by Resolve, before a profile sets any flag
}

// NewPlan resolves the request — the profile under the command line, Prepare's reshaping,
// a child's share of a fleet — and checks the faults, the outputs, the fleet and the
// services' flags, all before anything runs.
func NewPlan(r *Request) (*Plan, error) {
	if r.Child {
		if err := fleet.TakeSecrets(r.Flags.Set); err != nil {
			return nil, err
		}
	}
	cfg, prof, err := r.Resolve()
	if err != nil {
		return nil, err
	}
	if r.Prepare != nil {
		if err := r.Prepare(&cfg); err != nil {
			return nil, err
		}
	}
	if r.Child {
		if err := fleet.TakeShare(&cfg, r.ChildPhases); err != nil {
			return nil, err
		}
	}
	// The faults are parsed here, once, after Prepare has made the final phases.
	window := cfg.Duration
	if r.FaultWindow > 0 {
		window = r.FaultWindow
	}
	plan, err := session.NewPlan(&cfg, window)
	if err != nil {
		return nil, err
	}
	out := output.Options{Format: r.Format, HDRDir: r.HDRDir, Plot: r.Plot, HTML: r.HTML,
		FailOnUnsafe: r.FailOnUnsafe, MaxErrors: r.maxErrors()}
	if err := out.Check(); err != nil {
		return nil, err
	}
	if out.Out, err = (loadcheck.Paths{Out: r.Out, Live: r.Live, Plot: r.Plot, HTML: r.HTML,
		CPUProfile: r.CPUProfile, MemProfile: r.MemProfile, HDRDir: r.HDRDir}).Check(); err != nil {
		return nil, err
	}
	p := &Plan{Command: r.Command, Config: cfg, Profile: prof, Faults: plan, Services: r.Services,
		Child: r.Child, Output: out, Live: Live{MetricsAddr: r.MetricsAddr, File: r.Live},
		Quiet: r.Quiet, Node: r.Node, CPUProfile: r.CPUProfile, MemProfile: r.MemProfile}
	if !r.Child {
		if p.Fleet, err = r.fleet(cfg.Phases, plan); err != nil {
			return nil, err
		}
		if cfg.Barrier != nil { // a multi-process run needs a Redis every process reaches
			if err := redis.FlagsOf(r.Services).CheckShared(r.Node, cfg.Barrier.Nodes); err != nil {
				return nil, err
			}
		}
		if err := loadcheck.ServiceFlags(r.Services, cfg.Phases, r.given); err != nil {
			return nil, err
		}
	}
	return p, p.Live.Check()
}

// Resolve applies the profile under the command line (profiles.Merge) and builds the
// workload configuration, checked: flags given on the command line win, the profile fills
// the others, and the defaults whatever remains. It resolves --node (auto/N) in place.
func (r *Request) Resolve() (workload.Config, *profiles.Profile, error) {
	r.onCommandLine = cmdline.Given(r.Flags)
	cfg, prof, own, err := profiles.Merge(r.Profile, profiles.CommandLine{Config: &r.Config, Strategy: &r.Strategy,
		Faults: &r.Faults, Given: r.onCommandLine, Set: r.Flags.Set, CheckFault: checkFault})
	if err != nil {
		return cfg, nil, err
	}
	if cfg.Barrier, r.Node, err = node.Barrier(r.Node, r.Barrier, os.LookupEnv); err != nil {
		return cfg, nil, err
	}
	if err := cfg.Validate(); err != nil {
		return cfg, nil, prof.Place(err, r.given)
	}
	if err := loadcheck.Joint(&cfg, loadcheck.Load{Command: r.Command, Strategy: r.Strategy, ProfilePhases: own,
		Services: r.Services}); err != nil {
		return cfg, nil, err
	}
	return cfg, prof, nil
}

// fleet plans a --procs run's children (fleet.Segments): nil when every phase runs here.
func (r *Request) fleet(phases []workload.Phase, plan *faults.Plan) (*fleet.Spec, error) {
	segs, err := fleet.Segments(phases, plan, fleet.Refuse{Node: r.Node != "" || r.Barrier != "",
		Profiling: r.CPUProfile != "" || r.MemProfile != ""})
	if err != nil || segs == nil {
		return nil, err
	}
	spec := &fleet.Spec{Command: r.Command, Given: fleet.Given(r.Flags), Drop: r.ChildDrop, Segments: segs, Phases: len(phases)}
	if r.ChildCommand != "" {
		spec.Command = r.ChildCommand
	}
	return spec, nil
}

// maxErrors is the report's check of --max-errors: nil without the flag.
func (r *Request) maxErrors() func([]report.Result) string {
	m := r.MaxErrors
	return func(results []report.Result) string { return m.Exceeded(results, output.ResultName) }
}

// given says whether the command line set the flag named name.
func (r *Request) given(name string) bool {
	_, ok := r.onCommandLine(name)
	return ok
}

// checkFault parses a fault spec, for a profile's to be checked where it is written.
func checkFault(spec string) error {
	_, err := faults.Parse(spec)
	return err
}
