package launch

// A run's phases and its report.

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"time"

	"github.com/lockbench/lockbench/internal/buildinfo"
	"github.com/lockbench/lockbench/internal/cmdline"
	"github.com/lockbench/lockbench/internal/fleet"
	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/services/redis"
	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/workload"
)

// Summary starts the report of this run, of the kind given (report.KindRun, ...), and
// shows its description above the status line.
func (r *Run) Summary(kind string) *report.Summary {
	p, s := r.Plan, r.Session
	sum := &report.Summary{
		Tool: "lockbench", Kind: kind, Version: buildinfo.Version(), StartedAt: time.Now().UTC(),
		Target: s.Target(),
		Config: p.Config.Report(),
		Node:   p.Node,
	}
	if p.Profile != nil {
		sum.Config.Profile = p.Profile.Name
	}
	sum.Notes = append(sum.Notes, s.Notes()...)
	if redis.FlagsOf(p.Services).TLSInsecure {
		sum.Notes = append(sum.Notes, "TLS without certificate checks (--tls-insecure): the connection is encrypted but the servers were not authenticated")
	}
	if note := s.ProxyNote(); note != "" {
		sum.Notes = append(sum.Notes, note)
	}
	r.Progress.header(sum)
	return sum
}

// Run runs the phases — in this process, or in the --procs fleet — into sum.
func (r *Run) Run(sum *report.Summary) error {
	if r.fleet == nil {
		var err error
		sum.Results, err = workload.Run(r.Ctx, r.Plan.Config, r.Backend(), r.Engine())
		return err
	}
	merged, err := r.fleet.Run(r.Ctx)
	if merged != nil {
		sum.Results = merged.Results
		sum.Notes = fleet.AppendNew(sum.Notes, merged.Notes...)
		if r.Session.Redis == nil {
			sum.Target = merged.Target // the children reached it; they know what it is
		}
	}
	return err
}

// Finish ends a run: an error that is not the interruption is returned as is; otherwise
// the report (partial when interrupted) is written, and the error returned carries the
// exit code the results call for.
func (r *Run) Finish(sum *report.Summary, runErr error, stdout io.Writer) error {
	p := r.Plan
	r.live.finish()
	if r.report != nil {
		stdout = r.report
	}
	if p.Output.Format == "table" && p.Output.Out == "" && isTerminal(stdout) {
		r.Progress.dropHeader() // the report prints the same lines in their place
	}
	r.Progress.endStartUp()
	r.Progress.clear()
	if err := writeMemProfile(p.MemProfile); err != nil {
		return err
	}
	// A fleet's children write their partial results and the run itself ends without an
	// error: the fleet says whether it was cut short.
	sum.Interrupted = runErr != nil && r.Ctx.Err() != nil || r.fleet != nil && r.fleet.Interrupted()
	if runErr != nil && !sum.Interrupted {
		if strategies.IsFatal(runErr) && len(sum.Results) > 0 {
			// A strategy that could not go on (a driver died, hung or wrote garbage) ended
			// its phase early: the report shows what ran, and the run fails with its line.
			if err := p.Output.Write(sum, stdout); err != nil {
				var ee *cmdline.ExitError
				if !errors.As(err, &ee) {
					return err
				}
			}
			return cmdline.Exit(cmdline.ExitFailure, runErr.Error())
		}
		return runErr
	}
	return p.Output.Write(sum, stdout)
}

// writeMemProfile writes the allocation profile --memprofile asks for ("" for none).
func writeMemProfile(path string) error {
	if path == "" {
		return nil
	}
	file, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("--memprofile: %w", err)
	}
	defer file.Close()
	return pprof.Lookup("allocs").WriteTo(file, 0)
}
