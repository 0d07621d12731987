package main

// --procs N: a load command run as a fleet of N lockbench processes on this machine, the
// shape users deploy (many processes, a few goroutines each), measured in one command.
//
// The parent resolves and checks everything first, spawns (or reaches) the target once,
// then starts N children of its own binary. Each child is a process of a multi-process run
// (--node I/N with a barrier of the parent's choosing): its own clients, connections and
// local state, exactly as a separate machine would have, its share of the workers, its
// phases lined up with the others' at the barrier. The children write JSON results, which
// the parent merges (report.Merge, the cross-process oracle included) into the one report
// the flags ask for. While they run, each child streams its once-a-second progress to the
// parent on its stdout; the parent sums them for the status line, --live and
// --metrics-addr.

import (
	"bufio"
	"bytes"
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/spf13/pflag"

	"github.com/lockbench/lockbench/faults"
	"github.com/lockbench/lockbench/internal/proc"
	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/services"
	"github.com/lockbench/lockbench/session"
	"github.com/lockbench/lockbench/workload"
)

// procsTempName names the directory of a fleet's results, lockbench-procs-*: like the
// servers' directories, one whose owner was killed (kill -9) is removed by a later run.
const procsTempName = "procs"

func init() { proc.RegisterTempNames(procsTempName) }

// fleetFlags are --procs and the hidden flags the parent gives its children.
// --procs itself is a load setting (workload.Settings): the run's in Config.Procs, each
// phase's own in Phase.Procs.
type fleetFlags struct {
	child       bool   // --procs-child: this process is one of a --procs fleet
	fleetTarget bool   // the parent of a fleet: its children need Redis for their barrier
	childPhases string // --procs-phases FROM:TO: the fleet runs these phases (0-based, end excluded)
}

func (f *fleetFlags) bind(fs *pflag.FlagSet, cfg *workload.Config) {
	bindSetting(fs, "procs", cfg)
	fs.BoolVar(&f.child, "procs-child", false, "internal: this process is one of a --procs fleet")
	fs.StringVar(&f.childPhases, "procs-phases", "", "internal: the phases a --procs fleet runs, FROM:TO")
	_ = fs.MarkHidden("procs-child")
	_ = fs.MarkHidden("procs-phases")
}

// fleetSegment is a run of consecutive phases with the same number of processes: one
// fleet of children runs it.
type fleetSegment struct {
	from, to int // phases [from, to)
	procs    int
}

// fleetPlan checks each phase's procs against its workers and splits them into segments.
// nil when every phase runs in this process alone.
func (f *loadFlags) fleetPlan(cfg *workload.Config, plan *faults.Plan) ([]fleetSegment, error) {
	var segs []fleetSegment
	fleet := false
	for i, ph := range cfg.Phases {
		n := ph.Procs // checked >= 1 by Validate
		if n > 1 {
			fleet = true
		}
		if n > ph.Concurrency() {
			what := "--workers"
			if ph.Rate > 0 {
				what = "--max-inflight"
			}
			return nil, usageErrorf("invalid --procs %d: more processes than workers (%s %d in the %s phase); each process needs at least one", n, what, ph.Concurrency(), ph.Strategy)
		}
		if k := len(segs); k > 0 && segs[k-1].procs == n {
			segs[k-1].to = i + 1
			continue
		}
		segs = append(segs, fleetSegment{from: i, to: i + 1, procs: n})
	}
	if !fleet {
		return nil, nil
	}
	switch {
	case f.node != "" || f.barrier != "":
		return nil, usageErrorf("--procs and --node do not go together: --procs starts the processes of a multi-process run itself (each one a --node); use --node I/N --barrier NAME to run processes on several machines")
	case f.command == "capacity":
		return nil, usageErrorf("capacity does not take --procs: its search judges each step at once, and a step measured in several processes can only be judged once their results are merged; find the rate with 'lockbench sweep --param rate=... --procs N' instead")
	case f.profiling():
		return nil, usageErrorf("--cpuprofile and --memprofile profile this process, and with --procs the work runs in its children; profile one process without --procs")
	}
	if plan.Any(faults.Spec.NeedsNodes) {
		var kinds []string
		plan.Any(func(s faults.Spec) bool {
			if s.NeedsNodes() {
				kinds = append(kinds, s.Raw)
			}
			return false
		})
		return nil, usageErrorf("--procs does not take node faults (%s): they act on the servers from one process's phase clock; the client faults (holder-pause, process-pause, release-pause, clock-skew, crash-between) play in every process", strings.Join(kinds, ", "))
	}
	return segs, nil
}

func (f *loadFlags) profiling() bool { return f.cpuProfile != "" || f.memProfile != "" }

// childShare gives this process of a --procs fleet its share of every phase's workers,
// in-flight bound and open-loop rate: W workers over N processes are W/N each, and the
// first W mod N processes take one more.
func childShare(cfg *workload.Config, node, nodes int) {
	share := func(total int) int {
		n := total / nodes
		if node <= total%nodes {
			n++
		}
		return n
	}
	cfg.Workers, cfg.MaxInflight, cfg.Rate = share(cfg.Workers), share(cfg.MaxInflight), cfg.Rate/float64(nodes)
	for i := range cfg.Phases {
		ph := &cfg.Phases[i]
		ph.Workers, ph.MaxInflight, ph.Rate = share(ph.Workers), share(ph.MaxInflight), ph.Rate/float64(nodes)
	}
}

// childPhases keeps the phases [FROM, TO) of --procs-phases.
func childPhases(cfg *workload.Config, spec string) error {
	a, b, ok := strings.Cut(spec, ":")
	from, err1 := strconv.Atoi(a)
	to, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || from < 0 || to <= from || to > len(cfg.Phases) {
		return usageErrorf("invalid --procs-phases %q: want FROM:TO within the %d phases", spec, len(cfg.Phases))
	}
	cfg.Phases = cfg.Phases[from:to]
	return nil
}

// fleet is the parent's side of a --procs run.
type fleet struct {
	f        *loadFlags
	segs     []fleetSegment
	phases   int
	target   []string // the flags that reach the target and the services, for every child
	replaced []string // the user's flags that target stands for
	env      []string // the children's environment
	progress *progressLine
	stderr   io.Writer

	// interrupted: the run was cut short by a signal, to this process (or its process
	// group) or to a child alone: the merged report is a partial one.
	interrupted bool
}

// fleetOnly are the flags that belong to the parent: its outputs, its target (replaced by
// what it spawned), its own process. Everything else a child gets as given.
var fleetOnly = map[string]bool{
	"procs": true, "format": true, "out": true, "hdr-dir": true, "plot": true, "html": true, "live": true,
	"metrics-addr": true, "quiet": true, "cpuprofile": true, "memprofile": true,
	"fail-on-unsafe": true, "max-errors": true, "node": true, "barrier": true,
	"procs-child": true, "procs-phases": true,
}

// childTarget are the flags that send a child to the servers the parent opened: the Redis
// it spawned (or the one a `target up` state file names) and the services it spawned or
// dialled; replaced are the flags of the user's that these stand for. With --redis or
// --sentinel given, s.Redis is nil and the children reach Redis as the user said.
func childTarget(s *session.Session) (flags, replaced []string, err error) {
	if c := s.Redis; c != nil {
		if c.Mode == "embedded" {
			return nil, nil, usageErrorf("--procs needs a Redis server the processes can share; the embedded one lives inside one process: install redis-server, or give --redis")
		}
		flags, replaced = c.Child()
	}
	sf, sr := s.ChildFlags()
	return append(flags, sf...), append(replaced, sr...), nil
}

// childArgs is the command line of child node of a fleet of nodes running phases seg: the
// flags the user gave, less the parent's own, plus where the target is and who the child
// is. Values are passed as --name=value, so that none is mistaken for a flag. The flags a
// lock service declares secret (services.Service.Secrets: passwords, URLs that can carry
// one) are not on it: they are returned in secrets, which go to the child through its
// environment (secretsEnv), out of ps's sight.
func (fl *fleet) childArgs(seg fleetSegment, node int, barrier, out string) (args, secrets []string) {
	f := fl.f
	secret := services.SecretFlags()
	add := func(name, value string) {
		arg := "--" + name + "=" + value
		if contains(secret, name) {
			secrets = append(secrets, arg)
		} else {
			args = append(args, arg)
		}
	}
	args = []string{f.command}
	f.fs.Visit(func(flag *pflag.Flag) {
		if fleetOnly[flag.Name] || contains(fl.replaced, flag.Name) {
			return
		}
		if sv, ok := flag.Value.(pflag.SliceValue); ok {
			for _, v := range sv.GetSlice() {
				add(flag.Name, v)
			}
			return
		}
		add(flag.Name, flag.Value.String())
	})
	for _, t := range fl.target {
		name, value, _ := strings.Cut(strings.TrimPrefix(t, "--"), "=")
		add(name, value)
	}
	return append(args,
		"--procs-child", "--procs-phases="+strconv.Itoa(seg.from)+":"+strconv.Itoa(seg.to),
		"--node="+strconv.Itoa(node)+"/"+strconv.Itoa(seg.procs), "--barrier="+barrier,
		"--format=json", "--out="+out, "--quiet"), secrets
}

// secretsEnv carries a --procs child's secret flags (childArgs), a JSON list of
// --name=value, from its parent's environment to its flags (takeSecrets).
const secretsEnv = "LOCKBENCH_PROCS_SECRETS"

// takeSecrets sets the secret flags this child of a --procs fleet got through its
// environment, as if given on its command line, and clears them from the environment.
func (f *loadFlags) takeSecrets() error {
	raw, ok := os.LookupEnv(secretsEnv)
	if !ok {
		return nil
	}
	_ = os.Unsetenv(secretsEnv)
	var args []string
	if err := json.Unmarshal([]byte(raw), &args); err != nil {
		return usageErrorf("$%s: not a JSON list of --name=value (it is set by --procs): %v", secretsEnv, err)
	}
	for _, a := range args {
		name, value, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		if !contains(services.SecretFlags(), name) {
			return usageErrorf("$%s: --%s is not a secret flag (it is set by --procs)", secretsEnv, name)
		}
		if err := f.fs.Set(name, value); err != nil {
			return usageErrorf("$%s: --%s: %v", secretsEnv, name, err)
		}
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// run runs every segment's fleet in turn and returns the merged results in one Summary
// (its target as the first segment's processes saw it, the merges' notes). On interruption
// it returns what the children reported so far.
func (fl *fleet) run(ctx context.Context) (*report.Summary, error) {
	dir, err := proc.TempDir(procsTempName) // swept by a later run if this one is killed
	if err != nil {
		return nil, fmt.Errorf("--procs: a directory for the processes' results: %w", err)
	}
	defer os.RemoveAll(dir)
	out := &report.Summary{}
	for k, seg := range fl.segs {
		merged, err := fl.runSegment(ctx, seg, filepath.Join(dir, strconv.Itoa(k)))
		if merged != nil {
			if k == 0 {
				out.Target = merged.Target
			}
			out.Results = append(out.Results, merged.Results...)
			out.Notes = appendNew(out.Notes, merged.Notes...)
		}
		if err != nil || ctx.Err() != nil || fl.interrupted {
			return out, err
		}
	}
	return out, nil
}

func appendNew(list []string, items ...string) []string {
	for _, s := range items {
		if !contains(list, s) {
			list = append(list, s)
		}
	}
	return list
}

// child is one running process of a fleet.
type child struct {
	node   int
	cmd    *exec.Cmd
	out    string       // its JSON result
	stderr bytes.Buffer // what it said, for its error
	done   chan struct{}
	err    error // how it ended
}

// childEnv is the environment of one of procs children: env, and unless the user set
// GOMAXPROCS, each child's share of this machine's cores (at least one). The children stand
// for processes on machines of their own; N Go schedulers each sized for every core of one
// shared machine spin against each other and against Redis, and the fleet's handoffs
// measured that contention rather than the lock's (a release's round trip doubled with four
// children of GOMAXPROCS 2 on two cores).
func childEnv(env []string, procs int) []string {
	if os.Getenv("GOMAXPROCS") != "" {
		return env
	}
	share := max(1, runtime.NumCPU()/procs)
	return append(slices.Clip(env), "GOMAXPROCS="+strconv.Itoa(share))
}

// runSegment starts seg.procs children, waits for them, and merges their results. The first
// child that fails stops the others (they would wait for it at the barrier) and its error
// is the segment's.
func (fl *fleet) runSegment(ctx context.Context, seg fleetSegment, dir string) (*report.Summary, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("--procs: cannot find lockbench's own binary to start: %w", err)
	}
	var nonce [4]byte
	_, _ = crand.Read(nonce[:])
	barrier := "procs-" + hex.EncodeToString(nonce[:])

	agg := newFleetProgress(seg, fl.phases, fl.progress.update)
	kids := make([]*child, seg.procs)
	ended := make(chan *child, len(kids))
	for i := range kids {
		k := &child{node: i + 1, out: filepath.Join(dir, fmt.Sprintf("proc-%d.json", i+1)), done: make(chan struct{})}
		args, secrets := fl.childArgs(seg, k.node, barrier, k.out)
		k.cmd = exec.Command(exe, args...)
		k.cmd.Env = childEnv(fl.env, seg.procs)
		if len(secrets) > 0 {
			b, _ := json.Marshal(secrets)
			k.cmd.Env = append(k.cmd.Env, secretsEnv+"="+string(b))
		}
		k.cmd.Stderr = &k.stderr
		stdout, err := k.cmd.StdoutPipe()
		if err == nil {
			err = proc.Start(k.cmd) // dies with this process, SIGKILL included
		}
		if err != nil {
			stopAll(kids[:i], syscall.SIGKILL)
			for range i {
				<-ended
			}
			return nil, fmt.Errorf("--procs: start process %d: %w", k.node, err)
		}
		kids[i] = k
		go func() {
			agg.read(k.node, stdout)
			k.err = k.cmd.Wait()
			close(k.done)
			ended <- k
		}()
	}

	// Wait for every child. An interruption is passed on (each writes its partial result);
	// the first child that fails stops the others, which would wait for it at the barrier.
	var failed *child
	interrupted := false
	stop := ctx.Done()
	for range kids {
		var k *child
		for k == nil {
			select {
			case <-stop:
				interrupted, stop = true, nil
				stopAll(kids, syscall.SIGINT)
			case k = <-ended:
			}
		}
		if !interrupted && exitStatus(k.err) == exitInterrupted {
			// A child was signalled itself (each runs in a process group of its own, so
			// a kill reached it alone): the fleet stops as one, each child with its
			// partial result.
			interrupted, stop = true, nil
			stopAll(kids, syscall.SIGINT)
		}
		// A child's inconclusive phase (exit 6) is judged again on the merged result.
		if failed == nil && k.err != nil && exitStatus(k.err) != exitInconclusive && !(interrupted && exitStatus(k.err) == exitInterrupted) {
			failed = k
			stopAll(kids, syscall.SIGKILL)
		}
	}
	agg.flush()
	fl.interrupted = fl.interrupted || interrupted
	if failed != nil {
		return nil, failed.error()
	}
	var ins []*report.Summary
	for _, k := range kids {
		s, err := readSummary(k.out)
		if err != nil {
			if interrupted {
				continue // stopped before it had anything to report
			}
			return nil, fmt.Errorf("--procs: process %d wrote no result: %w", k.node, err)
		}
		ins = append(ins, s)
	}
	if len(ins) == 0 {
		return nil, nil
	}
	return report.Merge(ins, report.MergeOptions{})
}

// error is a failed child's error: its exit status and the last lines it wrote on stderr.
func (k *child) error() error {
	msg := strings.TrimSpace(k.stderr.String())
	lines := strings.Split(msg, "\n")
	if len(lines) > 20 {
		lines = lines[len(lines)-20:]
	}
	for i, l := range lines {
		lines[i] = strings.TrimPrefix(l, "lockbench run: ")
	}
	msg = strings.Join(lines, "\n")
	if msg == "" {
		msg = k.err.Error()
	}
	err := fmt.Errorf("process %d of the --procs fleet failed (%v): %s", k.node, k.err, msg)
	if exitStatus(k.err) == exitUsage {
		return &usageError{err}
	}
	return err
}

func exitStatus(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return -1
}

// stopAll signals every child still running.
func stopAll(kids []*child, sig syscall.Signal) {
	for _, k := range kids {
		if k == nil || k.cmd.Process == nil {
			continue
		}
		select {
		case <-k.done:
		default:
			_ = k.cmd.Process.Signal(sig)
		}
	}
}

// fleetProgress sums the children's once-a-second reports into the parent's: the k-th
// measured report of a phase from every child makes the fleet's k-th. The children's
// clocks tick apart, so a fleet second is the children's k-th seconds, not one instant.
type fleetProgress struct {
	seg     fleetSegment
	phases  int
	emit    func(workload.Progress)
	mu      sync.Mutex
	buckets map[[2]int]*fleetSecond // by (phase, k)
	seen    map[[2]int]int          // reports so far, by (phase, child)
	window  map[int]*hdrhistogram.Histogram
}

type fleetSecond struct {
	pr    workload.Progress
	hist  *hdrhistogram.Histogram
	n     int
	procs map[int]bool
}

func newFleetProgress(seg fleetSegment, phases int, emit func(workload.Progress)) *fleetProgress {
	return &fleetProgress{seg: seg, phases: phases, emit: emit,
		buckets: map[[2]int]*fleetSecond{}, seen: map[[2]int]int{}, window: map[int]*hdrhistogram.Histogram{}}
}

// read consumes one child's progress stream until it ends.
func (a *fleetProgress) read(node int, r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		var line childProgress
		if json.Unmarshal(sc.Bytes(), &line) != nil {
			continue
		}
		a.add(node, &line)
	}
	_, _ = io.Copy(io.Discard, r)
}

func (a *fleetProgress) add(node int, line *childProgress) {
	a.mu.Lock()
	defer a.mu.Unlock()
	phase := a.seg.from + line.Phase
	if line.Warmup {
		if node == 1 {
			a.emit(workload.Progress{Phase: phase, Phases: a.phases, Strategy: line.Strategy, Label: line.Label,
				Warmup: true, Elapsed: line.Elapsed, Total: line.Total})
		}
		return
	}
	k := a.seen[[2]int{phase, node}]
	a.seen[[2]int{phase, node}] = k + 1
	b := a.buckets[[2]int{phase, k}]
	if b == nil {
		b = &fleetSecond{procs: map[int]bool{}, hist: hdrhistogram.New(1, 3_600_000_000, 3),
			pr: workload.Progress{Phase: phase, Phases: a.phases, Strategy: line.Strategy, Label: line.Label, Total: line.Total}}
		a.buckets[[2]int{phase, k}] = b
	}
	b.n++
	b.pr.Elapsed = max(b.pr.Elapsed, line.Elapsed)
	s := &b.pr.Second
	s.Duration = max(s.Duration, line.Second.Duration)
	s.Acquired += line.Second.Acquired
	s.Timeouts += line.Second.Timeouts
	s.Errors += line.Second.Errors
	s.Overlaps += line.Second.Overlaps
	s.Renewals += line.Second.Renewals
	b.pr.AcquireRate += line.AcquireRate
	b.pr.Overlaps += line.Overlaps
	if h := decodeHist(line.Second.Latency); h != nil {
		b.hist.Merge(h)
	}
	if b.n == a.seg.procs {
		a.emitLocked([2]int{phase, k}, b)
	}
}

func (a *fleetProgress) emitLocked(key [2]int, b *fleetSecond) {
	delete(a.buckets, key)
	w := a.window[key[0]]
	if w == nil {
		w = hdrhistogram.New(1, 3_600_000_000, 3)
		a.window[key[0]] = w
	}
	w.Merge(b.hist)
	b.pr.P99US = w.ValueAtQuantile(99)
	if b.hist.TotalCount() > 0 {
		b.pr.Second.P50US, b.pr.Second.P99US = b.hist.ValueAtQuantile(50), b.hist.ValueAtQuantile(99)
	}
	b.pr.Second.Latency = b.hist
	a.emit(b.pr)
}

// flush emits the seconds that not every child reported (one that ended first).
func (a *fleetProgress) flush() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for key, b := range a.buckets {
		a.emitLocked(key, b)
	}
}

// childProgress is one line of a child's progress stream (--procs-child on stdout).
type childProgress struct {
	Phase       int           `json:"phase"`
	Strategy    string        `json:"strategy"`
	Label       string        `json:"label,omitempty"`
	Warmup      bool          `json:"warmup,omitempty"`
	Elapsed     time.Duration `json:"elapsed"`
	Total       time.Duration `json:"total"`
	AcquireRate float64       `json:"rate"`
	Overlaps    uint64        `json:"overlaps"`
	Second      struct {
		Duration                                       time.Duration `json:"duration"`
		Acquired, Timeouts, Errors, Overlaps, Renewals uint64
		Latency                                        string `json:"latency,omitempty"` // HDR V2, compressed, base64
	} `json:"second"`
}

// childProgressWriter is a child's observer of its progress: one JSON line per report on w.
func childProgressWriter(w io.Writer) func(workload.Progress) {
	var mu sync.Mutex
	enc := json.NewEncoder(w)
	return func(pr workload.Progress) {
		line := childProgress{Phase: pr.Phase, Strategy: pr.Strategy, Label: pr.Label, Warmup: pr.Warmup,
			Elapsed: pr.Elapsed, Total: pr.Total, AcquireRate: pr.AcquireRate, Overlaps: pr.Overlaps}
		s := &line.Second
		s.Duration, s.Acquired, s.Timeouts, s.Errors, s.Overlaps, s.Renewals = pr.Second.Duration,
			pr.Second.Acquired, pr.Second.Timeouts, pr.Second.Errors, pr.Second.Overlaps, pr.Second.Renewals
		if h := pr.Second.Latency; h != nil && h.TotalCount() > 0 {
			if b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase); err == nil {
				s.Latency = string(b)
			}
		}
		mu.Lock()
		defer mu.Unlock()
		_ = enc.Encode(line) // a parent that went away ends this process anyway
	}
}

func decodeHist(s string) *hdrhistogram.Histogram {
	if s == "" {
		return nil
	}
	h, err := hdrhistogram.Decode([]byte(s))
	if err != nil {
		return nil
	}
	return h
}

// takeShare makes this child of a --procs fleet run its phases with its share of the
// workers.
func (f *loadFlags) takeShare(cfg *workload.Config) error {
	if cfg.Barrier == nil {
		return usageErrorf("--procs-child goes with --node I/N and --barrier (it is set by --procs)")
	}
	if f.childPhases != "" {
		if err := childPhases(cfg, f.childPhases); err != nil {
			return err
		}
	}
	childShare(cfg, cfg.Barrier.Node, cfg.Barrier.Nodes)
	return nil
}

// startFleet opens what the children of a --procs run share: the Redis target when the
// flags do not name one (spawned, or a `target up` state file), and the lock services that
// are spawned for the run. With --redis or --sentinel the children reach Redis themselves,
// and a Redis that cannot be reached is their error.
func (f *loadFlags) startFleet(ctx context.Context, cfg workload.Config, plan *faults.Plan, segs []fleetSegment, progress *progressLine, stderr io.Writer) (*loadRun, error) {
	l := &loadRun{cfg: cfg}
	f.fleetTarget = true // the children meet at a barrier on Redis
	su := f.setup(&cfg, plan)
	var err error
	if !f.redisFlags().External() {
		l.s, err = session.Open(ctx, su)
	} else {
		l.s, err = session.OpenServices(ctx, su)
	}
	if err != nil {
		return nil, err
	}
	flags, replaced, err := childTarget(l.s)
	if err != nil {
		l.close()
		return nil, err
	}
	env := os.Environ() // the secret flags go with it (childArgs), not on command lines
	l.fleet = &fleet{f: f, segs: segs, phases: len(cfg.Phases), target: flags, replaced: replaced, env: env, progress: progress, stderr: stderr}
	return l, nil
}
