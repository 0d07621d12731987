// Package launch runs a load command (run, sweep, capacity) from its plan to its report:
// the signals, the status line and the live exports, the session on the target (or the
// --procs fleet), the run, and the report with the exit code it calls for.
//
// The plan is built once, from the flags, before anything starts (Plan), and nothing
// changes it afterwards. What Start opens it closes through one path: each step that
// opens something pushes its undoing, and Close undoes them in reverse, whether Start
// failed half-way or the run is over.
package launch

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"

	"github.com/lockbench/lockbench/faults"
	"github.com/lockbench/lockbench/internal/fleet"
	"github.com/lockbench/lockbench/internal/output"
	"github.com/lockbench/lockbench/profiles"
	"github.com/lockbench/lockbench/services"
	"github.com/lockbench/lockbench/services/redis"
	"github.com/lockbench/lockbench/session"
	"github.com/lockbench/lockbench/workload"
)

// Plan is a load command's run, resolved and checked before anything starts. Start reads
// it and never changes it.
type Plan struct {
	Command  string            // run, sweep or capacity
	Config   workload.Config   // the final phases: a sweep's, a child's share
	Profile  *profiles.Profile // --profile, nil without one
	Faults   *faults.Plan      // the faults, parsed and checked against the phases
	Services *services.Bound   // the lock services' flags, Redis's first

	// Fleet, with --procs, runs the phases in child processes; nil runs them here.
	Fleet *fleet.Spec
	// Child: this process is one of a --procs fleet (--procs-child).
	Child bool

	Output output.Options
	Live   Live
	Quiet  bool   // --quiet: no status line
	Node   string // --node as resolved (I/N), "" in a single-process run

	CPUProfile, MemProfile string // --cpuprofile, --memprofile
}

// Run is a load command under way: the signal context, the open session, the status line.
// Close it when done.
type Run struct {
	Plan     *Plan
	Ctx      context.Context // cancelled by the first SIGINT, SIGTERM or SIGHUP
	Session  *session.Session
	Progress *Line

	live   *exports
	report io.Writer // where the report goes without --out
	// fleet, with --procs, runs the phases in child processes: Session.Redis is then nil
	// when the children reach an external Redis themselves.
	fleet *fleet.Fleet

	undo []func() // what Start opened, undone in reverse by Close
}

// Start opens what the plan runs on: the signal handling, the live exports (first, so
// that a busy port or an unwritable file fails at once), the session on the target, or for
// a fleet what its children share. On an error, what it opened is closed again.
func Start(p *Plan, stdout, stderr io.Writer) (_ *Run, err error) {
	r := &Run{Plan: p, Progress: newLine(stderr, p.Quiet)}
	defer func() {
		if err != nil {
			r.Close()
		}
	}()
	ctx, stop := signalContext(r.Progress, p.Child)
	r.Ctx = ctx
	r.push(stop)
	if r.live, err = p.Live.start(stdout, stderr, r.Progress); err != nil {
		return nil, err
	}
	r.push(r.live.close)
	if p.Child {
		r.Progress.observe(fleet.ProgressWriter(stdout))
	}
	if p.Fleet != nil {
		err = r.openFleet()
	} else {
		err = r.openSession(stderr)
	}
	if err != nil {
		return nil, err
	}
	r.live.sampleRedis(ctx, r.Session)
	r.push(r.live.finish) // the sampler reads the session's clients: it stops first
	r.report = p.Live.reportWriter(p.Output.Out, stdout, stderr)
	if n := workload.StartUpNotice(p.Config.Phases, runtime.GOMAXPROCS(0)); n != "" && !p.Child && !p.Quiet {
		// The start-up shows nothing else for its first second, and is not part of the window.
		fmt.Fprintln(stderr, "lockbench: "+n)
	}
	return r, nil
}

// push adds an undoing to the ones Close runs.
func (r *Run) push(fn func()) { r.undo = append(r.undo, fn) }

// Close undoes what Start opened, last first. It may be called more than once.
func (r *Run) Close() {
	for len(r.undo) > 0 {
		fn := r.undo[len(r.undo)-1]
		r.undo = r.undo[:len(r.undo)-1]
		fn()
	}
}

// setup is what the session opens: the final phases and their faults, whether Redis is
// wanted even when no phase locks on it (a fleet's children meet at a barrier on it), and
// the lock services' flags.
func (r *Run) setup() session.Setup {
	p := r.Plan
	wanted := p.Fleet != nil || redis.FlagsOf(p.Services).Named()
	return session.Setup{Config: &p.Config, Plan: p.Faults, RedisWanted: wanted, Services: p.Services}
}

// openSession opens the session the phases run on in this process, checks the replicas,
// and starts the CPU profile.
func (r *Run) openSession(stderr io.Writer) error {
	p := r.Plan
	s, err := session.Open(r.Ctx, r.setup())
	if err != nil {
		return err
	}
	r.Session = s
	r.push(s.Close)
	if err := s.CheckReplicas(r.Ctx, &p.Config); err != nil {
		return err
	}
	if p.CPUProfile != "" {
		file, err := os.Create(p.CPUProfile)
		if err == nil {
			if err = pprof.StartCPUProfile(file); err != nil {
				file.Close()
			}
		}
		if err != nil {
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		r.push(func() { pprof.StopCPUProfile(); file.Close() })
	}
	if b := p.Config.Barrier; b != nil && !p.Child && b.Nodes > 1 {
		fmt.Fprintf(stderr, "lockbench: node %d/%d: each phase starts when all %d processes have reached barrier %q on Redis; waiting up to %s for the others\n",
			b.Node, b.Nodes, b.Nodes, b.Name, b.Timeout)
	}
	if s.Redis.Note != "" && p.Output.Format != "table" && p.Output.Format != "markdown" {
		fmt.Fprintln(stderr, "lockbench: note: "+s.Redis.Note) // the table prints it first itself
	}
	return nil
}

// openFleet opens what the children of a --procs run share: the Redis target when the
// flags do not name one (spawned, or a `target up` state file), and the lock services that
// are spawned for the run. With --redis or --sentinel the children reach Redis themselves,
// and a Redis that cannot be reached is their error.
func (r *Run) openFleet() error {
	var err error
	if !redis.FlagsOf(r.Plan.Services).External() {
		r.Session, err = session.Open(r.Ctx, r.setup())
	} else {
		r.Session, err = session.OpenServices(r.Ctx, r.setup())
	}
	if err != nil {
		return err
	}
	r.push(r.Session.Close)
	r.fleet, err = fleet.New(*r.Plan.Fleet, r.Session, r.Progress.update)
	return err
}

// Engine are the engine's options for a run on this session: the status line's reports.
func (r *Run) Engine() workload.Options {
	return r.Progress.engine(r.Session.Options(r.Progress.update))
}

// Backend is what the phases run on in this process.
func (r *Run) Backend() workload.Backend { return r.Session.Backend() }
