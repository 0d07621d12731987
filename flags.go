package main

import (
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/lockbench/lockbench/faults"
	"github.com/lockbench/lockbench/internal/cmdline"
	"github.com/lockbench/lockbench/internal/loadcheck"
	"github.com/lockbench/lockbench/internal/node"
	"github.com/lockbench/lockbench/profiles"
	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/services"
	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/workload"
)

// loadFlags are the flags of every command that drives a load: run, sweep and capacity.
// One struct bound to one pflag set; profiles fill the flags the command line left alone.
type loadFlags struct {
	fs  *pflag.FlagSet
	cfg workload.Config

	strategy string
	profile  string
	faults   []string

	liveFlags
	fleetFlags

	// command is the load command these flags belong to: run, sweep or capacity.
	command string

	format, out, hdrDir, plot, html string
	quiet, failOnUnsafe             bool
	maxErrors                       maxErrors

	// faultWindow is how long a phase's measured window is when it is not --duration
	// (capacity's steps): scheduled faults must fire within it.
	faultWindow time.Duration

	node, barrier string

	cpuProfile, memProfile string

	onCommandLine func(name string) (string, bool) // flags given on the command line, before a profile set any

	services *services.Bound // the flags of each registered lock service, Redis's first
}

func (f *loadFlags) bind(fs *pflag.FlagSet) {
	f.fs = fs
	fs.StringVarP(&f.profile, "profile", "p", "", "scenario file: a built-in name (see 'lockbench profiles') or a path; flags given here override it")
	fs.StringVarP(&f.strategy, "strategy", "s", "token", "strategies, one phase each: a,b,c or all ("+strings.Join(append(strategies.Names(), strategies.Families()...), ", ")+")")
	for _, s := range workload.Settings {
		if s.Is(workload.Flag) && s.Name != "procs" { // --procs goes with the fleet's flags
			bindSetting(fs, s.Name, &f.cfg)
		}
	}
	fs.StringArrayVar(&f.faults, "fault", nil, "inject a fault (repeatable): "+strings.Join(faults.Kinds(), ", ")+"; see 'lockbench faults'")
	fs.BoolVar(&f.failOnUnsafe, "fail-on-unsafe", false, "exit 3 when any phase's verdict is UNSAFE (for CI)")
	fs.Var(&f.maxErrors, "max-errors", "exit 5 when a phase sees more lock-server ("+strings.Join(services.Titles(), ", ")+") or network errors than this: a count, or a share of its attempts (1%)")
	f.services = services.Bind(fs)
	fs.StringVarP(&f.format, "format", "f", report.DefaultFormat, "report format: "+strings.Join(report.Formats(), ", "))
	fs.StringVarP(&f.out, "out", "o", "", "write the report to this file instead of stdout")
	fs.StringVar(&f.hdrDir, "hdr-dir", "", "also write <name>.hgrm (percentile distribution) and <name>.hlog (interval log) here, one pair per phase named as its table row (e.g. token-ttl=1s)")
	fs.StringVar(&f.plot, "plot", "", "also draw the results into this file (.png or .svg)")
	fs.StringVar(&f.html, "html", "", "also write a self-contained HTML report to this file: charts, the verdicts' evidence, fairness and cost, readable offline (share it with a team)")
	f.liveFlags.bind(fs)
	f.fleetFlags.bind(fs, &f.cfg)
	fs.StringVar(&f.node, "node", "", "multi-machine run: this process is node I of N (I/N), with --barrier; auto/N takes I from $JOB_COMPLETION_INDEX + 1 (a Kubernetes Indexed Job)")
	fs.StringVar(&f.barrier, "barrier", "", "multi-machine run: a name shared by the N processes; they start each phase together")
	fs.BoolVarP(&f.quiet, "quiet", "q", false, "no live progress line on stderr")
	fs.StringVar(&f.cpuProfile, "cpuprofile", "", "profile lockbench itself: write a CPU profile (go tool pprof) here")
	fs.StringVar(&f.memProfile, "memprofile", "", "profile lockbench itself: write an allocation profile here at the end")
}

// bindSetting binds the load setting named name (workload.Settings) to its field in cfg,
// with its declared default, help and one-letter name.
func bindSetting(fs *pflag.FlagSet, name string, cfg *workload.Config) {
	s, ok := workload.LookupSetting(name)
	if !ok {
		panic("lockbench: no load setting " + name)
	}
	s.Fill(cfg)
	fs.VarP(s.Value(cfg), s.Name, s.Short, s.Usage())
}

// resolve applies the profile under the command line (profiles.Merge) and builds the
// workload configuration, checked: flags given on the command line win, the profile fills
// the others, and the defaults whatever remains.
func (f *loadFlags) resolve() (workload.Config, *profiles.Profile, error) {
	f.onCommandLine = cmdline.Given(f.fs)
	cfg, prof, own, err := profiles.Merge(f.profile, profiles.CommandLine{Config: &f.cfg, Strategy: &f.strategy,
		Faults: &f.faults, Given: f.onCommandLine, Set: f.fs.Set, CheckFault: checkFault})
	if err != nil {
		return cfg, nil, err
	}
	if cfg.Barrier, f.node, err = node.Barrier(f.node, f.barrier, os.LookupEnv); err != nil {
		return cfg, nil, err
	}
	if err := cfg.Validate(); err != nil {
		return cfg, nil, prof.Place(err, f.given)
	}
	if err := loadcheck.Joint(&cfg, loadcheck.Load{Command: f.command, Strategy: f.strategy, ProfilePhases: own,
		Services: f.services}); err != nil {
		return cfg, nil, err
	}
	return cfg, prof, nil
}

// given says whether the command line set the flag named name.
func (f *loadFlags) given(name string) bool {
	_, ok := f.onCommandLine(name)
	return ok
}

// checkFault parses a fault spec, for a profile's to be checked where it is written.
func checkFault(spec string) error {
	_, err := faults.Parse(spec)
	return err
}
