package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/lockbench/lockbench/faults"
	"github.com/lockbench/lockbench/plot"
	"github.com/lockbench/lockbench/profiles"
	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/target"
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

	connFlags

	format, out, hdrDir, plot string
	quiet, failOnUnsafe       bool
	maxErrors                 maxErrors

	// faultWindow is how long a phase's measured window is when it is not --duration
	// (capacity's steps): scheduled faults must fire within it.
	faultWindow time.Duration

	node, barrier string

	cpuProfile, memProfile string

	cmdline map[string]bool // flags given on the command line, before a profile set any
}

func (f *loadFlags) bind(fs *pflag.FlagSet) {
	f.fs = fs
	fs.StringVarP(&f.profile, "profile", "p", "", "scenario file: a built-in name (see 'lockbench profiles') or a path; flags given here override it")
	fs.StringVarP(&f.strategy, "strategy", "s", "token", "strategies, one phase each: a,b,c or all ("+strings.Join(strategies.Names(), ", ")+")")
	fs.IntVarP(&f.cfg.Workers, "workers", "w", 100, "goroutines contending for the locks (closed loop)")
	fs.Float64VarP(&f.cfg.Rate, "rate", "r", 0, "open loop: start this many acquisitions per second regardless of completions (0 = closed loop)")
	fs.IntVar(&f.cfg.MaxInflight, "max-inflight", 0, "open loop: acquisitions in flight at most; an arrival beyond it is dropped (default --workers)")
	fs.IntVarP(&f.cfg.Keys, "keys", "k", 1, "distinct lock keys (1 = one hot key)")
	fs.Var(&f.cfg.KeyDist, "key-dist", "which key each acquisition takes: uniform or zipf[:S] (S > 1, default 1.1)")
	fs.Var(&f.cfg.Hold, "hold", "time inside the critical section: a duration (1ms), uniform:MIN..MAX or exp:MEAN")
	fs.IntVar(&f.cfg.Reentry, "reentry", 0, "nested re-acquires by the holder (reentrant strategies only)")
	fs.DurationVarP(&f.cfg.Duration, "duration", "d", 10*time.Second, "measured time per phase")
	fs.DurationVar(&f.cfg.Warmup, "warmup", time.Second, "unrecorded time before each measurement (0 = none)")
	fs.DurationVar(&f.cfg.AcquireTimeout, "acquire-timeout", 5*time.Second, "give up one acquire after this long (counted as a timeout)")
	fs.DurationVar(&f.cfg.TTL, "ttl", 10*time.Second, "lease time Redis keeps a lock")
	fs.Var(&f.cfg.Watchdog, "watchdog", "lease renewal: off, auto (= ttl/3, Redisson's default) or an interval below the ttl")
	fs.Var(&f.cfg.Wait, "wait", "how a blocked acquirer waits: spin[:INTERVAL], backoff[:MIN..MAX] or pubsub")
	fs.IntVar(&f.cfg.WaitReplicas, "wait-replicas", 0, "after each acquire, WAIT until this many replicas have the lock (Redisson's check), narrowing the failover window")
	fs.Var(&f.cfg.OnLost, "on-lost", "before its last write, a holder whose lease may be gone: continue (as the articles' code does) or abort (check the watchdog and the lease's local deadline first; counted as aborted)")
	fs.StringArrayVar(&f.faults, "fault", nil, "inject a fault (repeatable): "+strings.Join(faultKinds(), ", ")+"; see 'lockbench faults'")
	fs.BoolVar(&f.failOnUnsafe, "fail-on-unsafe", false, "exit 3 when any phase's verdict is UNSAFE (for CI)")
	fs.Var(&f.maxErrors, "max-errors", "exit 5 when a phase sees more Redis or network errors than this: a count, or a share of its attempts (1%)")
	f.connFlags.bind(fs)
	fs.StringVarP(&f.format, "format", "f", report.DefaultFormat, "report format: "+strings.Join(report.Formats(), ", "))
	fs.StringVarP(&f.out, "out", "o", "", "write the report to this file instead of stdout")
	fs.StringVar(&f.hdrDir, "hdr-dir", "", "also write <name>.hgrm (percentile distribution) and <name>.hlog (interval log) here, one pair per phase named as its table row (e.g. token-ttl=1s)")
	fs.StringVar(&f.plot, "plot", "", "also draw the results into this file (.png or .svg)")
	fs.StringVar(&f.node, "node", "", "multi-machine run: this process is node I of N (I/N), with --barrier")
	fs.StringVar(&f.barrier, "barrier", "", "multi-machine run: a name shared by the N processes; they start each phase together")
	fs.BoolVarP(&f.quiet, "quiet", "q", false, "no live progress line on stderr")
	fs.StringVar(&f.cpuProfile, "cpuprofile", "", "profile lockbench itself: write a CPU profile (go tool pprof) here")
	fs.StringVar(&f.memProfile, "memprofile", "", "profile lockbench itself: write an allocation profile here at the end")
	_ = fs.Lookup("watchdog").DefValue // (the zero values print as off / backoff:1ms..50ms)
	fs.Lookup("watchdog").DefValue = "off"
	fs.Lookup("wait").DefValue = "backoff:1ms..50ms"
}

func faultKinds() []string {
	var out []string
	for _, f := range faults.Forms() {
		kind, _, _ := strings.Cut(f, ":")
		out = append(out, kind)
	}
	return out
}

// resolve applies the profile under the command line and builds the workload
// configuration: flags given on the command line win, the profile fills the others, and the
// defaults whatever remains.
func (f *loadFlags) resolve() (workload.Config, *profiles.Profile, error) {
	// What the command line set, before a profile sets more: fs.Changed cannot tell them
	// apart afterwards, and a profile's phase may override its own top level but not the
	// command line.
	f.cmdline = map[string]bool{}
	f.fs.Visit(func(fl *pflag.Flag) { f.cmdline[fl.Name] = true })
	if err := f.checkCommandLine(); err != nil {
		return workload.Config{}, nil, err
	}
	if err := checkStrategies(f.strategy); err != nil {
		return workload.Config{}, nil, err
	}
	var prof *profiles.Profile
	if f.profile != "" {
		p, err := profiles.Load(f.profile)
		if err != nil {
			return workload.Config{}, nil, err
		}
		if err := f.applyProfile(p); err != nil {
			return workload.Config{}, nil, err
		}
		prof = p
	}
	cfg := f.cfg
	if cfg.Warmup == 0 {
		cfg.Warmup = -1 // the flag's 0 means none; Config's 0 means the default
	}
	if f.strategy == "all" {
		cfg.Strategies = strategies.Names()
	} else {
		cfg.Strategies = splitList(f.strategy)
	}
	if cfg.TTL <= 0 {
		return cfg, nil, usageErrorf("invalid --ttl %s: must be > 0", cfg.TTL)
	}
	if _, err := faults.ParseAll(f.faults); err != nil {
		return cfg, nil, err
	}
	cfg.Faults = f.faults
	if prof != nil && len(prof.Phases) > 0 && !f.cmdline["strategy"] {
		phases, err := f.profilePhases(prof, &cfg)
		if err != nil {
			return cfg, nil, err
		}
		cfg.Phases = phases
	}
	if f.node != "" || f.barrier != "" {
		if f.node == "" || f.barrier == "" {
			return cfg, nil, usageErrorf("--node and --barrier go together: --node I/N --barrier NAME")
		}
		i, n, err := workload.ParseNode(f.node)
		if err != nil {
			return cfg, nil, err
		}
		cfg.Barrier = &workload.Barrier{Name: f.barrier, Node: i, Nodes: n}
	}
	if err := cfg.Validate(); err != nil {
		return cfg, nil, err
	}
	for _, ph := range cfg.Phases {
		if _, err := faults.ParseAll(ph.Faults); err != nil {
			return cfg, nil, err
		}
	}
	return cfg, prof, nil
}

// applyProfile sets every flag the command line left alone from the profile's top level.
func (f *loadFlags) applyProfile(p *profiles.Profile) error {
	for _, v := range p.Values {
		if f.cmdline[v.Key] {
			continue
		}
		if err := f.fs.Set(v.Key, v.Value); err != nil {
			return p.ErrorAt(v, err)
		}
		if err := checkSetting(v.Key, &f.cfg); err != nil {
			return p.ErrorAt(v, err)
		}
		if v.Key == "strategy" {
			if err := checkStrategies(v.Value); err != nil {
				return p.ErrorAt(v, err)
			}
		}
	}
	if !f.cmdline["fault"] {
		for _, v := range p.Faults {
			if _, err := faults.Parse(v.Value); err != nil {
				return p.ErrorAt(v, err)
			}
			f.faults = append(f.faults, v.Value)
		}
	}
	return nil
}

// profilePhases builds the profile's explicit phases on top of the resolved settings; a
// setting given on the command line beats a phase's own value too.
func (f *loadFlags) profilePhases(p *profiles.Profile, cfg *workload.Config) ([]workload.Phase, error) {
	var out []workload.Phase
	for _, pp := range p.Phases {
		if _, ok := strategies.Lookup(pp.Strategy); !ok {
			return nil, p.ErrorAt(profiles.Value{Key: "strategy", Value: pp.Strategy, Line: pp.Line},
				fmt.Errorf("unknown strategy %q; valid: %s", pp.Strategy, strings.Join(strategies.Names(), ", ")))
		}
		ph := cfg.Phase(pp.Strategy)
		ph.Label = pp.Label
		fs := phaseFlags(&ph)
		for _, v := range pp.Values {
			if f.cmdline[v.Key] {
				continue
			}
			if err := fs.Set(v.Key, v.Value); err != nil {
				return nil, p.ErrorAt(v, err)
			}
			if err := checkPhaseSetting(v.Key, &ph); err != nil {
				return nil, p.ErrorAt(v, err)
			}
		}
		if !f.cmdline["fault"] {
			for _, v := range pp.Faults {
				if _, err := faults.Parse(v.Value); err != nil {
					return nil, p.ErrorAt(v, err)
				}
				ph.Faults = append(ph.Faults, v.Value)
			}
		}
		out = append(out, ph)
	}
	return out, nil
}

// phaseFlags binds a phase's own settings to flags of the same names, so that a profile's
// phase values go through the very parsers the command line uses.
func phaseFlags(ph *workload.Phase) *pflag.FlagSet {
	fs := pflag.NewFlagSet("phase", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.IntVar(&ph.Workers, "workers", ph.Workers, "")
	fs.Float64Var(&ph.Rate, "rate", ph.Rate, "")
	fs.IntVar(&ph.Keys, "keys", ph.Keys, "")
	fs.Var(&ph.Hold, "hold", "")
	fs.DurationVar(&ph.TTL, "ttl", ph.TTL, "")
	fs.Var(&ph.Watchdog, "watchdog", "")
	fs.Var(&ph.Wait, "wait", "")
	return fs
}

// launch is a load command under way: its resolved configuration, the connected target,
// the progress line and the signal context. Close it when done.
type launch struct {
	ctx      context.Context
	stop     func()
	cfg      workload.Config
	prof     *profiles.Profile
	s        *session
	progress *progressLine
}

// launch resolves the flags — prepare, when set, may then reshape the configuration (a
// sweep turns it into phases) — checks the output flags, and connects to the target, all
// before anything runs.
func (f *loadFlags) launch(stderr io.Writer, prepare func(*workload.Config) error) (*launch, error) {
	cfg, prof, err := f.resolve()
	if err != nil {
		return nil, err
	}
	if prepare != nil {
		if err := prepare(&cfg); err != nil {
			return nil, err
		}
	}
	window := cfg.Duration
	if f.faultWindow > 0 {
		window = f.faultWindow
	}
	if err := checkFaultTimes(cfg.Phases, window); err != nil {
		return nil, err
	}
	if err := f.checkOutput(); err != nil {
		return nil, err
	}
	progress := newProgressLine(stderr, f.quiet)
	ctx, stop := signalContext(progress)
	s, err := f.open(ctx, &cfg)
	if err != nil {
		stop()
		return nil, err
	}
	if err := checkReplicas(ctx, &cfg, s.conn); err != nil {
		s.close()
		stop()
		return nil, err
	}
	if f.cpuProfile != "" {
		file, err := os.Create(f.cpuProfile)
		if err == nil {
			err = pprof.StartCPUProfile(file)
		}
		if err != nil {
			s.close()
			stop()
			return nil, fmt.Errorf("--cpuprofile: %w", err)
		}
		inner := stop
		stop = func() {
			pprof.StopCPUProfile()
			file.Close()
			inner()
		}
	}
	if s.conn.Note != "" && f.format != "table" && f.format != "markdown" {
		fmt.Fprintln(stderr, "lockbench: note: "+s.conn.Note) // the table prints it first itself
	}
	return &launch{ctx: ctx, stop: stop, cfg: cfg, prof: prof, s: s, progress: progress}, nil
}

func (l *launch) close() {
	l.s.close()
	l.stop()
}

// writeMemProfile writes the allocation profile --memprofile asks for.
func (f *loadFlags) writeMemProfile() error {
	if f.memProfile == "" {
		return nil
	}
	file, err := os.Create(f.memProfile)
	if err != nil {
		return fmt.Errorf("--memprofile: %w", err)
	}
	defer file.Close()
	return pprof.Lookup("allocs").WriteTo(file, 0)
}

// summary starts the report of this launch.
func (l *launch) summary(f *loadFlags, kind string) *report.Summary {
	return f.summary(kind, &l.cfg, l.prof, l.s)
}

// complete ends a run: an error that is not the interruption is returned as is; otherwise
// the report (partial when interrupted) is written.
func (f *loadFlags) complete(l *launch, sum *report.Summary, runErr error, stdout io.Writer) error {
	l.progress.clear()
	if err := f.writeMemProfile(); err != nil {
		return err
	}
	sum.Interrupted = runErr != nil && l.ctx.Err() != nil
	if runErr != nil && !sum.Interrupted {
		return runErr
	}
	return f.finish(sum, stdout)
}

// session is a connected target with what the fault layer needs.
type session struct {
	conn    *target.Conn
	proxies *faults.Proxies
	nodes   *faults.Nodes
}

func (s *session) close() {
	s.conn.Close()
	if s.proxies != nil {
		s.proxies.Close()
	}
}

// open connects to (or spawns, or embeds) the target the flags describe, with proxies in
// front of the servers when a fault needs them.
func (f *loadFlags) open(ctx context.Context, cfg *workload.Config) (*session, error) {
	need := ""
	for _, ph := range cfg.Phases {
		if info, _ := strategies.Lookup(ph.Strategy); info.MultiNode {
			need = target.Redlock
		}
	}
	spec, err := f.connFlags.spec(need)
	if err != nil {
		return nil, err
	}
	s := &session{}
	failovers := countFaults(cfg, faults.Failover)
	if failovers > 1 {
		return nil, usageErrorf("--fault failover: one failover per run (afterwards the initial master is no longer the master); got %d", failovers)
	}
	if needsProxy(cfg) || failovers > 0 {
		s.proxies = faults.NewProxies()
	}
	if needsProxy(cfg) {
		spec.Dial = s.proxies.Dial
	}
	if failovers > 0 {
		spec.ReplicationVia = s.proxies.Replication
		if spec.Topology == "" && spec.Need == "" {
			spec.Topology = target.Sentinel // the only topology a failover can happen in
		}
	}
	conn, err := target.Open(ctx, spec)
	if err != nil {
		if s.proxies != nil {
			s.proxies.Close()
		}
		return nil, err
	}
	s.conn = conn
	s.nodes = faults.NewNodes(conn, s.proxies)
	// Check every phase's faults against this target now, not when the phase starts.
	for _, ph := range cfg.Phases {
		specs, _ := faults.ParseAll(ph.Faults)
		if _, err := faults.New(specs, ph.Concurrency(), s.nodes); err != nil {
			s.close()
			return nil, err
		}
	}
	return s, nil
}

func needsProxy(cfg *workload.Config) bool {
	return anyFault(cfg, func(s faults.Spec) bool { return s.NeedsProxy() })
}

func countFaults(cfg *workload.Config, kind faults.Kind) int {
	n := 0
	for _, ph := range cfg.Phases {
		specs, _ := faults.ParseAll(ph.Faults)
		for _, s := range specs {
			if s.Kind == kind {
				n++
			}
		}
	}
	return n
}

func anyFault(cfg *workload.Config, pred func(faults.Spec) bool) bool {
	for _, ph := range cfg.Phases {
		specs, _ := faults.ParseAll(ph.Faults)
		if slices.ContainsFunc(specs, pred) {
			return true
		}
	}
	return false
}

// options are the engine's collaborators for this session.
func (s *session) options(progress *progressLine) workload.Options {
	return workload.Options{
		Progress: progress.update,
		NoCost:   s.conn.Mode == "embedded",
		Faults: func(ph workload.Phase) (workload.Faults, error) {
			specs, err := faults.ParseAll(ph.Faults)
			if err != nil {
				return nil, err
			}
			return faults.New(specs, ph.Concurrency(), s.nodes)
		},
	}
}

func (s *session) target() workload.Target {
	return workload.Target{Client: s.conn.Client, Nodes: s.conn.Nodes}
}

// summary starts the report of a run on this session.
func (f *loadFlags) summary(kind string, cfg *workload.Config, prof *profiles.Profile, s *session) *report.Summary {
	sum := &report.Summary{
		Tool: "lockbench", Kind: kind, Version: versionString(), StartedAt: time.Now().UTC(),
		Target: report.Target{Mode: s.conn.Mode, Topology: s.conn.Topology, Addrs: s.conn.Addrs, RedisVersion: s.conn.RedisVersion, Note: s.conn.Note},
		Config: cfg.Report(),
		Node:   f.node,
	}
	if prof != nil {
		sum.Config.Profile = prof.Name
	}
	if needsProxy(cfg) {
		sum.Notes = append(sum.Notes, "traffic to Redis goes through in-process TCP proxies (for the latency/partition faults): latencies include that hop")
	}
	return sum
}

// finish writes the report and the extra files the flags ask for, and maps the outcome to
// an exit code: interrupted (130) before unsafe (3).
func (f *loadFlags) finish(sum *report.Summary, stdout io.Writer) error {
	write, err := report.Lookup(f.format)
	if err != nil {
		return err
	}
	if err := writeReport(sum, write, f.out, stdout); err != nil {
		return err
	}
	if f.hdrDir != "" {
		if _, err := report.WriteHDRFiles(f.hdrDir, sum); err != nil {
			return err
		}
	}
	if f.plot != "" {
		if err := plot.Write(f.plot, sum); err != nil {
			return err
		}
	}
	if sum.Interrupted {
		return &exitError{code: exitInterrupted, msg: "interrupted; the report covers what ran"}
	}
	if f.failOnUnsafe {
		for _, r := range sum.Results {
			if report.IsUnsafe(r.Verdict) {
				return &exitError{code: exitUnsafe, msg: fmt.Sprintf("%s: %s (--fail-on-unsafe)", resultName(r), r.Verdict)}
			}
		}
	}
	if msg := f.maxErrors.exceeded(sum.Results); msg != "" {
		return &exitError{code: exitErrors, msg: msg}
	}
	return nil
}

func resultName(r report.Result) string {
	if r.Label != "" {
		return r.Strategy + " " + r.Label
	}
	return r.Strategy
}

// checkOutput validates --format and the plot extension before anything runs.
func (f *loadFlags) checkOutput() error {
	if _, err := report.Lookup(f.format); err != nil {
		return err
	}
	if f.plot != "" {
		if err := plot.CheckPath(f.plot); err != nil {
			return &usageError{err}
		}
	}
	return f.checkOutputPaths()
}

// writeReport writes the summary to out, or to stdout when out is empty.
func writeReport(s *report.Summary, write report.Reporter, out string, stdout io.Writer) error {
	if out == "" {
		return write(stdout, s)
	}
	file, err := os.Create(out)
	if err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	if err := write(file, s); err != nil {
		file.Close()
		return err
	}
	return file.Close()
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// signalContext is cancelled by the first SIGINT/SIGTERM; a second one kills at once.
func signalContext(progress *progressLine) (context.Context, func()) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop()
		progress.say("interrupted: stopping workers, releasing held locks, stopping servers (Ctrl-C again to quit at once)")
	}()
	return ctx, stop
}

// progressLine is the live status on a terminal's stderr: rewritten in place once a second,
// cleared before the report. Off when stderr is not a terminal or with --quiet.
type progressLine struct {
	w  io.Writer
	on bool
}

func newProgressLine(stderr io.Writer, quiet bool) *progressLine {
	f, ok := stderr.(*os.File)
	return &progressLine{w: stderr, on: !quiet && ok && term.IsTerminal(int(f.Fd()))}
}

func (p *progressLine) update(pr workload.Progress) {
	if !p.on {
		return
	}
	head := fmt.Sprintf("[%d/%d %s]", pr.Phase, pr.Phases, strings.TrimSpace(pr.Strategy+" "+pr.Label))
	if pr.Warmup {
		fmt.Fprintf(p.w, "\r\033[K%s warm-up %s/%s", head, pr.Elapsed.Round(time.Second), pr.Total)
		return
	}
	fmt.Fprintf(p.w, "\r\033[K%s %s/%s  %s acq/s  p99 %s  overlaps %d", head,
		pr.Elapsed.Round(time.Second), pr.Total, report.FormatRate(pr.AcquireRate), report.FormatUS(float64(pr.P99US)), pr.Overlaps)
}

// say prints a line above the progress line; like the line itself, only on a terminal.
func (p *progressLine) say(msg string) {
	if p.on {
		fmt.Fprintf(p.w, "\r\033[K%s\n", msg)
	}
}

func (p *progressLine) clear() {
	if p.on {
		fmt.Fprint(p.w, "\r\033[K")
	}
}
