package main

import (
	"strings"

	"github.com/spf13/pflag"

	"github.com/lockbench/lockbench/faults"
	"github.com/lockbench/lockbench/internal/launch"
	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/services"
	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/workload"
)

// loadFlags are the flags of every command that drives a load: run, sweep and capacity,
// bound to one pflag set. Their values are a launch.Request, which launch.NewPlan resolves
// (profiles fill the flags the command line left alone) and checks.
type loadFlags struct {
	launch.Request
}

func (f *loadFlags) bind(fs *pflag.FlagSet) {
	f.Flags = fs
	fs.StringVarP(&f.Profile, "profile", "p", "", "scenario file: a built-in name (see 'lockbench profiles') or a path; flags given here override it")
	fs.StringVarP(&f.Strategy, "strategy", "s", "token", "strategies, one phase each: a,b,c or all ("+strings.Join(append(strategies.Names(), strategies.Families()...), ", ")+")")
	for _, s := range workload.Settings {
		if s.Is(workload.Flag) && s.Name != "procs" { // --procs goes with the fleet's flags
			bindSetting(fs, s.Name, &f.Config)
		}
	}
	fs.StringArrayVar(&f.Faults, "fault", nil, "inject a fault (repeatable): "+strings.Join(faults.Kinds(), ", ")+"; see 'lockbench faults'")
	fs.BoolVar(&f.FailOnUnsafe, "fail-on-unsafe", false, "exit 3 when any phase's verdict is UNSAFE (for CI)")
	fs.Var(&f.MaxErrors, "max-errors", "exit 5 when a phase sees more lock-server ("+strings.Join(services.Titles(), ", ")+") or network errors than this: a count, or a share of its attempts (1%)")
	f.Services = services.Bind(fs)
	fs.StringVarP(&f.Format, "format", "f", report.DefaultFormat, "report format: "+strings.Join(report.Formats(), ", "))
	fs.StringVarP(&f.Out, "out", "o", "", "write the report to this file instead of stdout")
	fs.StringVar(&f.HDRDir, "hdr-dir", "", "also write <name>.hgrm (percentile distribution) and <name>.hlog (interval log) here, one pair per phase named as its table row (e.g. token-ttl=1s)")
	fs.StringVar(&f.Plot, "plot", "", "also draw the results into this file (.png or .svg)")
	fs.StringVar(&f.HTML, "html", "", "also write a self-contained HTML report to this file: charts, the verdicts' evidence, fairness and cost, readable offline (share it with a team)")
	fs.StringVar(&f.MetricsAddr, "metrics-addr", "", "serve Prometheus/OpenMetrics metrics at http://HOST:PORT/metrics while running (:9464 on every interface; port 0 picks a free one, printed on stderr)")
	fs.StringVar(&f.Live, "live", "", "write one NDJSON line per strategy per second to this file, or - for stdout (the report then goes to --out, or to stderr)")
	// --procs is a load setting (the run's in Config.Procs, each phase's own in
	// Phase.Procs); the hidden flags are what a --procs parent gives its children.
	bindSetting(fs, "procs", &f.Config)
	fs.BoolVar(&f.Child, "procs-child", false, "internal: this process is one of a --procs fleet")
	fs.StringVar(&f.ChildPhases, "procs-phases", "", "internal: the phases a --procs fleet runs, FROM:TO")
	_ = fs.MarkHidden("procs-child")
	_ = fs.MarkHidden("procs-phases")
	fs.StringVar(&f.Node, "node", "", "multi-machine run: this process is node I of N (I/N), with --barrier; auto/N takes I from $JOB_COMPLETION_INDEX + 1 (a Kubernetes Indexed Job)")
	fs.StringVar(&f.Barrier, "barrier", "", "multi-machine run: a name shared by the N processes; they start each phase together")
	fs.BoolVarP(&f.Quiet, "quiet", "q", false, "no live progress line on stderr")
	fs.StringVar(&f.CPUProfile, "cpuprofile", "", "profile lockbench itself: write a CPU profile (go tool pprof) here")
	fs.StringVar(&f.MemProfile, "memprofile", "", "profile lockbench itself: write an allocation profile here at the end")
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
