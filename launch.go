package main

// What a load command does between its flags and its report: connect to the target, wire
// the fault layer, run, and hand the summary on.

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/lockbench/lockbench/faults"
	"github.com/lockbench/lockbench/profiles"
	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/services/redis"
	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/workload"
)

// launch is a load command under way: its resolved configuration, the connected target,
// the progress line and the signal context. Close it when done.
type launch struct {
	ctx      context.Context
	stop     func()
	cfg      workload.Config
	prof     *profiles.Profile
	s        *session
	progress *progressLine
	live     *liveExports // --metrics-addr, --live
	report   io.Writer    // where the report goes without --out (see reportWriter)

	// fleet, with --procs, runs the phases in child processes: s is then nil when the
	// children reach an external Redis themselves, and svc holds the services the parent
	// spawned for them.
	fleet *fleet
	svc   *services
}

// launch resolves the flags — prepare, when set, may then reshape the configuration (a
// sweep turns it into phases) — checks the output flags, and connects to the target, all
// before anything runs.
func (f *loadFlags) launch(stdout, stderr io.Writer, prepare func(*workload.Config) error) (*launch, error) {
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
		if err := f.takeShare(&cfg); err != nil {
			return nil, err
		}
	}
	// The faults are parsed here, once, after prepare has made the final phases.
	phaseFaults := make([][]string, len(cfg.Phases))
	for i, ph := range cfg.Phases {
		phaseFaults[i] = ph.Faults
	}
	plan, err := faults.NewPlan(phaseFaults)
	if err != nil {
		return nil, err
	}
	window := cfg.Duration
	if f.faultWindow > 0 {
		window = f.faultWindow
	}
	if err := checkFaultTimes(plan, window); err != nil {
		return nil, err
	}
	if err := checkServiceFaults(plan, cfg.Phases); err != nil {
		return nil, err
	}
	if err := checkFaultStrategies(plan, cfg.Phases); err != nil {
		return nil, err
	}
	if err := f.checkOutput(); err != nil {
		return nil, err
	}
	var segs []fleetSegment
	if !f.child {
		if segs, err = f.fleetPlan(&cfg, plan); err != nil {
			return nil, err
		}
	}
	progress := newProgressLine(stderr, f.quiet)
	ctx, stop := signalContext(progress)
	exports, err := f.liveFlags.start(stdout, stderr, progress)
	if err != nil {
		stop()
		return nil, err
	}
	stopSignals := stop
	stop = func() { exports.close(); stopSignals() }
	if f.child {
		progress.observe(childProgressWriter(stdout))
	}
	if segs != nil {
		l, err := f.launchFleet(ctx, cfg, plan, segs, progress, stderr)
		if err != nil {
			stop()
			return nil, err
		}
		if l.s != nil {
			exports.sampleRedis(ctx, l.s)
		}
		l.ctx, l.stop, l.prof, l.progress, l.live = ctx, stop, prof, progress, exports
		l.report = f.liveFlags.reportWriter(f.out, stdout, stderr)
		return l, nil
	}
	s, err := f.open(ctx, &cfg, plan)
	if err != nil {
		stop()
		return nil, err
	}
	if err := checkReplicas(ctx, &cfg, s.conn); err != nil {
		s.close()
		stop()
		return nil, err
	}
	exports.sampleRedis(ctx, s)
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
	if b := cfg.Barrier; b != nil && !f.child && b.Nodes > 1 {
		fmt.Fprintf(stderr, "lockbench: node %d/%d: each phase starts when all %d processes have reached barrier %q on Redis; waiting up to %s for the others\n",
			b.Node, b.Nodes, b.Nodes, b.Name, b.Timeout)
	}
	if s.conn.Note != "" && f.format != "table" && f.format != "markdown" {
		fmt.Fprintln(stderr, "lockbench: note: "+s.conn.Note) // the table prints it first itself
	}
	return &launch{ctx: ctx, stop: stop, cfg: cfg, prof: prof, s: s, progress: progress,
		live: exports, report: f.liveFlags.reportWriter(f.out, stdout, stderr)}, nil
}

func (l *launch) close() {
	if l.s != nil {
		l.s.close()
	}
	l.svc.close()
	if l.stop != nil {
		l.stop()
	}
}

// run runs the phases — in this process, or in the --procs fleet — into sum.
func (l *launch) run(sum *report.Summary) error {
	if l.fleet == nil {
		var err error
		sum.Results, err = workload.Run(l.ctx, l.cfg, l.s.target(), l.s.options(l.progress))
		return err
	}
	merged, err := l.fleet.run(l.ctx)
	if merged != nil {
		sum.Results = merged.Results
		sum.Notes = appendNew(sum.Notes, merged.Notes...)
		if l.s == nil {
			sum.Target = merged.Target // the children reached it; they know what it is
		}
	}
	return err
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
	s := l.s
	if s == nil {
		s = &session{conn: &redis.Conn{}, plan: &faults.Plan{}, svc: l.svc}
	}
	return f.summary(kind, &l.cfg, l.prof, s)
}

// complete ends a run: an error that is not the interruption is returned as is; otherwise
// the report (partial when interrupted) is written.
func (f *loadFlags) complete(l *launch, sum *report.Summary, runErr error, stdout io.Writer) error {
	l.progress.clear()
	l.live.finish()
	if l.report != nil {
		stdout = l.report
	}
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
	conn    *redis.Conn
	plan    *faults.Plan
	proxies *faults.Proxies
	nodes   *faults.Nodes
	svc     *services // etcd, ZooKeeper, PostgreSQL when a strategy runs on them
}

func (s *session) close() {
	s.svc.close()
	s.conn.Close()
	if s.proxies != nil {
		s.proxies.Close()
	}
}

// open connects to (or spawns, or embeds) the target the flags describe, with proxies in
// front of the servers when a fault needs them.
func (f *loadFlags) open(ctx context.Context, cfg *workload.Config, plan *faults.Plan) (*session, error) {
	need := ""
	for _, ph := range cfg.Phases {
		if info, _ := strategies.Lookup(ph.Strategy); info.MultiNode {
			need = redis.Redlock
		}
	}
	spec, err := f.connFlags.spec(need)
	if err != nil {
		return nil, err
	}
	s := &session{plan: plan}
	if !f.needsRedis(cfg) {
		// Every phase runs on etcd, ZooKeeper or PostgreSQL, and nothing else asks for
		// Redis: spawn none (the services keep their own cost and cleanup).
		s.conn = &redis.Conn{Mode: noRedis}
		s.nodes = faults.NewNodes(nil, nil)
		if plan.NeedsProxy() {
			s.proxies = faults.NewProxies() // the services' latency and partition faults
		}
		if s.svc, err = f.serviceFlags.openServices(ctx, cfg, f.connectTimeout); err != nil {
			s.close()
			return nil, err
		}
		s.svc.route(s.proxies, plan, cfg.Phases)
		return s, s.checkFaults(cfg)
	}
	failovers := plan.Count(faults.Failover)
	if failovers > 1 {
		return nil, usageErrorf("--fault failover: one failover per run (afterwards the initial master is no longer the master); got %d", failovers)
	}
	if plan.NeedsProxy() || failovers > 0 {
		s.proxies = faults.NewProxies()
	}
	if plan.NeedsProxy() {
		spec.Dial = s.proxies.Dial
	}
	if failovers > 0 {
		spec.ReplicationVia = s.proxies.Replication
		if spec.Topology == "" && spec.Need == "" {
			spec.Topology = redis.Sentinel // the only topology a failover can happen in
		}
	}
	conn, err := redis.Open(ctx, spec)
	if err != nil {
		if s.proxies != nil {
			s.proxies.Close()
		}
		return nil, err
	}
	s.conn = conn
	s.nodes = faults.NewNodes(conn, s.proxies)
	if s.svc, err = f.serviceFlags.openServices(ctx, cfg, f.connectTimeout); err != nil {
		s.close()
		return nil, err
	}
	s.svc.route(s.proxies, plan, cfg.Phases)
	return s, s.checkFaults(cfg)
}

// noRedis is the target mode of a run that reached no Redis: every phase ran on another
// lock service.
const noRedis = "none"

// needsRedis tells whether the run needs a Redis: a phase of a Redis strategy, the barrier
// and clock of a multi-process run, or a target the user named.
func (f *loadFlags) needsRedis(cfg *workload.Config) bool {
	if cfg.Barrier != nil || f.fleetTarget || f.redis != "" || f.sentinel != "" || f.cmdline["topology"] {
		return true
	}
	for _, ph := range cfg.Phases {
		if info, _ := strategies.Lookup(ph.Strategy); info.Service == "" {
			return true
		}
	}
	return false
}

// checkFaults checks every phase's faults against this target now, not when the phase
// starts; the session is closed when one does not fit.
func (s *session) checkFaults(cfg *workload.Config) error {
	for i, ph := range cfg.Phases {
		if _, err := faults.New(s.plan.Phase(i), ph.Concurrency(), s.nodesFor(ph)); err != nil {
			s.close()
			return err
		}
	}
	return nil
}

// options are the engine's collaborators for this session.
func (s *session) options(progress *progressLine) workload.Options {
	return workload.Options{
		Progress: progress.update,
		NoCost:   s.conn.Mode == "embedded",
		Faults: func(ph workload.Phase) (workload.Faults, error) {
			specs, err := s.plan.Specs(ph.Faults)
			if err != nil {
				return nil, err
			}
			return faults.New(specs, ph.Concurrency(), s.nodesFor(ph))
		},
	}
}

// nodesFor is what phase ph's node faults act on: the servers of the lock service its
// strategy runs on — the Redis target's, or etcd's, ZooKeeper's, PostgreSQL's.
func (s *session) nodesFor(ph workload.Phase) *faults.Nodes {
	if info, _ := strategies.Lookup(ph.Strategy); info.Service != "" {
		if n := s.svc.nodes(info.Service); n != nil {
			return n
		}
	}
	return s.nodes
}

func (s *session) target() workload.Backend {
	if s.conn.Mode == noRedis {
		return s.svc.backend(nil)
	}
	return s.svc.backend(s.conn.Backend())
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
	sum.Notes = append(sum.Notes, s.svc.notes()...)
	if f.tlsInsecure {
		sum.Notes = append(sum.Notes, "TLS without certificate checks (--tls-insecure): the connection is encrypted but the servers were not authenticated")
	}
	if s.plan.NeedsProxy() {
		to := append([]string{"Redis"}, s.svc.routedNames()...)
		names := to[0]
		if n := len(to); n > 1 {
			names = strings.Join(to[:n-1], ", ") + " and " + to[n-1]
		}
		sum.Notes = append(sum.Notes, "traffic to "+names+" goes through in-process TCP proxies (for the latency/partition faults): latencies include that hop")
	}
	return sum
}
