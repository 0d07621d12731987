package main

// What a load command does between its flags and its report: connect to the target, wire
// the fault layer, run, and hand the summary on.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"time"

	"github.com/lockbench/lockbench/faults"
	"github.com/lockbench/lockbench/profiles"
	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/services/redis"
	"github.com/lockbench/lockbench/session"
	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/workload"
)

// loadRun is a load command under way: its resolved configuration, the open session, the
// progress line and the signal context. Close it when done.
type loadRun struct {
	ctx      context.Context
	stop     func()
	cfg      workload.Config
	prof     *profiles.Profile
	s        *session.Session
	progress *progressLine
	live     *liveExports // --metrics-addr, --live
	report   io.Writer    // where the report goes without --out (see reportWriter)

	// fleet, with --procs, runs the phases in child processes: s.Redis is then nil when
	// the children reach an external Redis themselves.
	fleet *fleet
}

// startRun resolves the flags — prepare, when set, may then reshape the configuration (a
// sweep turns it into phases) — checks the output flags, and opens the session, all
// before anything runs.
func (f *loadFlags) startRun(stdout, stderr io.Writer, prepare func(*workload.Config) error) (*loadRun, error) {
	if f.child {
		if err := f.takeSecrets(); err != nil {
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
		if err := f.takeShare(&cfg); err != nil {
			return nil, err
		}
	}
	// The faults are parsed here, once, after prepare has made the final phases.
	window := cfg.Duration
	if f.faultWindow > 0 {
		window = f.faultWindow
	}
	plan, err := session.NewPlan(&cfg, window)
	if err != nil {
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
		if err := f.checkNodeTarget(&cfg); err != nil {
			return nil, err
		}
		if err := f.checkServiceFlags(&cfg); err != nil {
			return nil, err
		}
	}
	progress := newProgressLine(stderr, f.quiet)
	ctx, stop := signalContext(progress, f.child)
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
		l, err := f.startFleet(ctx, cfg, plan, segs, progress, stderr)
		if err != nil {
			stop()
			return nil, err
		}
		exports.sampleRedis(ctx, l.s)
		l.ctx, l.stop, l.prof, l.progress, l.live = ctx, stop, prof, progress, exports
		l.report = f.liveFlags.reportWriter(f.out, stdout, stderr)
		f.sayStartUp(stderr, &cfg)
		return l, nil
	}
	s, err := session.Open(ctx, f.setup(&cfg, plan))
	if err != nil {
		stop()
		return nil, err
	}
	if err := s.CheckReplicas(ctx, &cfg); err != nil {
		s.Close()
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
			s.Close()
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
	if s.Redis.Note != "" && f.format != "table" && f.format != "markdown" {
		fmt.Fprintln(stderr, "lockbench: note: "+s.Redis.Note) // the table prints it first itself
	}
	f.sayStartUp(stderr, &cfg)
	return &loadRun{ctx: ctx, stop: stop, cfg: cfg, prof: prof, s: s, progress: progress,
		live: exports, report: f.liveFlags.reportWriter(f.out, stdout, stderr)}, nil
}

// sayStartUp says, once the target is reached and before the first phase, how long its
// workers take to start when that is a few seconds or more (workload.StartUpNotice): the
// start-up shows nothing else for its first second, and is not part of the window.
func (f *loadFlags) sayStartUp(stderr io.Writer, cfg *workload.Config) {
	if n := workload.StartUpNotice(cfg.Phases, runtime.GOMAXPROCS(0)); n != "" && !f.child && !f.quiet {
		fmt.Fprintln(stderr, "lockbench: "+n)
	}
}

func (l *loadRun) close() {
	l.s.Close()
	if l.stop != nil {
		l.stop()
	}
}

// run runs the phases — in this process, or in the --procs fleet — into sum.
func (l *loadRun) run(sum *report.Summary) error {
	if l.fleet == nil {
		var err error
		sum.Results, err = workload.Run(l.ctx, l.cfg, l.s.Backend(), l.progress.engine(l.s.Options(l.progress.update)))
		return err
	}
	merged, err := l.fleet.run(l.ctx)
	if merged != nil {
		sum.Results = merged.Results
		sum.Notes = appendNew(sum.Notes, merged.Notes...)
		if l.s.Redis == nil {
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

// summary starts the report of this run.
func (l *loadRun) summary(f *loadFlags, kind string) *report.Summary {
	sum := f.summary(kind, &l.cfg, l.prof, l.s)
	l.progress.header(sum)
	return sum
}

// reportRun ends a run: an error that is not the interruption is returned as is; otherwise
// the report (partial when interrupted) is written.
func (f *loadFlags) reportRun(l *loadRun, sum *report.Summary, runErr error, stdout io.Writer) error {
	l.live.finish()
	if l.report != nil {
		stdout = l.report
	}
	if f.format == "table" && f.out == "" && isTerminal(stdout) {
		l.progress.dropHeader() // the report prints the same lines in their place
	}
	l.progress.endStartUp()
	l.progress.clear()
	if err := f.writeMemProfile(); err != nil {
		return err
	}
	// A fleet's children write their partial results and the run itself ends without an
	// error: the fleet says whether it was cut short.
	sum.Interrupted = runErr != nil && l.ctx.Err() != nil || l.fleet != nil && l.fleet.interrupted
	if runErr != nil && !sum.Interrupted {
		if strategies.IsFatal(runErr) && len(sum.Results) > 0 {
			// A strategy that could not go on (a driver died, hung or wrote garbage) ended
			// its phase early: the report shows what ran, and the run fails with its line.
			if err := f.writeOutputs(sum, stdout); err != nil {
				var ee *exitError
				if !errors.As(err, &ee) {
					return err
				}
			}
			return &exitError{code: exitFailure, msg: runErr.Error()}
		}
		return runErr
	}
	return f.writeOutputs(sum, stdout)
}

// summary starts the report of a run on this session.
func (f *loadFlags) summary(kind string, cfg *workload.Config, prof *profiles.Profile, s *session.Session) *report.Summary {
	sum := &report.Summary{
		Tool: "lockbench", Kind: kind, Version: versionString(), StartedAt: time.Now().UTC(),
		Target: s.Target(),
		Config: cfg.Report(),
		Node:   f.node,
	}
	if prof != nil {
		sum.Config.Profile = prof.Name
	}
	sum.Notes = append(sum.Notes, s.Notes()...)
	if f.redisFlags().TLSInsecure {
		sum.Notes = append(sum.Notes, "TLS without certificate checks (--tls-insecure): the connection is encrypted but the servers were not authenticated")
	}
	if note := s.ProxyNote(); note != "" {
		sum.Notes = append(sum.Notes, note)
	}
	return sum
}

// setup is what the session opens for these flags: the final phases and their faults,
// whether Redis is wanted even when no phase locks on it, and the lock services' flags.
func (f *loadFlags) setup(cfg *workload.Config, plan *faults.Plan) session.Setup {
	wanted := f.fleetTarget || f.redisFlags().Named()
	return session.Setup{Config: cfg, Plan: plan, RedisWanted: wanted, Services: f.services}
}

// redisFlags are the flags of the Redis target (--redis, --password, --tls, ...), which
// services/redis registers.
func (f *loadFlags) redisFlags() *redis.Flags { return redis.FlagsOf(f.services) }
