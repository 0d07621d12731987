package output

// The report and its extra files, and the exit code a finished run maps to.

import (
	"fmt"
	"io"

	"github.com/lockbench/lockbench/internal/cmdline"
	"github.com/lockbench/lockbench/internal/usage"
	"github.com/lockbench/lockbench/plot"
	"github.com/lockbench/lockbench/report"
	htmlreport "github.com/lockbench/lockbench/report/html"
)

// Options are the output flags of a load command.
type Options struct {
	Format string // --format: a report.Lookup name
	Out    string // --out: the report's file; "" for stdout
	HDRDir string // --hdr-dir
	Plot   string // --plot
	HTML   string // --html

	FailOnUnsafe bool // --fail-on-unsafe: exit 3 on an UNSAFE verdict
	// MaxErrors describes the first result with more errors than --max-errors allows, ""
	// when none has; nil: no bound.
	MaxErrors func([]report.Result) string
}

// Check validates --format and the plot extension before anything runs.
func (o *Options) Check() error {
	if _, err := report.Lookup(o.Format); err != nil {
		return err
	}
	if o.Plot != "" {
		if err := plot.CheckPath(o.Plot); err != nil {
			return &usage.Error{Err: err}
		}
	}
	return nil
}

// Write writes the report (to stdout without --out) and the extra files the options ask
// for, and maps the outcome to an exit code: interrupted (130) before unsafe (3).
func (o *Options) Write(sum *report.Summary, stdout io.Writer) error {
	write, err := report.Lookup(o.Format)
	if err != nil {
		return err
	}
	if err := WriteReport(sum, write, o.Out, stdout); err != nil {
		return err
	}
	if o.HDRDir != "" {
		if _, err := report.WriteHDRFiles(o.HDRDir, sum); err != nil {
			return err
		}
	}
	if o.Plot != "" {
		if err := plot.Write(o.Plot, sum); err != nil {
			return err
		}
	}
	if o.HTML != "" {
		if err := WriteHTML(o.HTML, func(w io.Writer) error { return htmlreport.Write(w, sum) }); err != nil {
			return err
		}
	}
	if sum.Interrupted {
		return cmdline.Exit(cmdline.ExitInterrupted, "interrupted; the report covers what ran")
	}
	if o.FailOnUnsafe {
		for _, r := range sum.Results {
			if report.IsUnsafe(r.Verdict) {
				return cmdline.Exit(cmdline.ExitUnsafe, fmt.Sprintf("%s: %s (--fail-on-unsafe)", ResultName(r), r.Verdict))
			}
		}
	}
	if msg := failedPhase(sum.Results); msg != "" {
		return cmdline.Exit(cmdline.ExitFailure, msg)
	}
	if o.MaxErrors != nil {
		if msg := o.MaxErrors(sum.Results); msg != "" {
			return cmdline.Exit(cmdline.ExitErrors, msg)
		}
	}
	if msg := inconclusivePhase(sum.Results); msg != "" {
		return cmdline.Exit(cmdline.ExitInconclusive, msg)
	}
	return nil
}

// inconclusivePhase is one line about the first inconclusive phase — its verdict and what
// to do about it — "" when none is. It reads the typed results, never their notes.
func inconclusivePhase(results []report.Result) string {
	for _, r := range results {
		if !report.IsInconclusive(r.Verdict) {
			continue
		}
		msg := ResultName(r) + ": " + r.Verdict
		if h := errorHint(&r); h != "" {
			msg += "; " + h
		}
		return msg
	}
	return ""
}

// errorHint names what the phase's first errors call for: the ACL right a denied command
// lacked, or the lock server that stopped answering; "" when neither.
func errorHint(r *report.Result) string {
	if e := r.FirstError(report.ErrorDenied); e != nil {
		if e.Right == "" {
			return "the lock server refused a command to this user (" + e.Message + ")"
		}
		return "grant it: ACL SETUSER <user> " + e.Right + " (first refusal: " + e.Message + ")"
	}
	for _, e := range r.FirstErrors {
		if e.Op == report.OpProbe {
			return "the lock server stopped answering (" + e.Message + "): is it frozen (SIGSTOP, a debugger, swap) or down?"
		}
	}
	return ""
}

// ResultName names a result as its table row does: the strategy and its label.
func ResultName(r report.Result) string {
	if r.Label != "" {
		return r.Strategy + " " + r.Label
	}
	return r.Strategy
}

// failedPhase describes the first phase in which every attempt failed with an error — no
// acquire, nothing but Redis or network errors — "" when none did: such a run measured
// nothing, and its exit code must say so (1, like any runtime failure). A phase whose
// acquires failed only outside the measured window (a loaded machine's first attempts can
// outlast a short one) counts too: its first error is an acquire's.
func failedPhase(results []report.Result) string {
	for _, r := range results {
		acquiresFailed := r.Errors > 0 || (len(r.FirstErrors) > 0 && r.FirstErrors[0].Op == report.OpAcquire)
		if r.Acquired > 0 || !acquiresFailed || r.Timeouts > 0 {
			continue
		}
		msg := fmt.Sprintf("%s: no acquire succeeded, every attempt failed (%d errors)", ResultName(r), r.Errors)
		if r.Errors == 0 {
			msg = ResultName(r) + ": no acquire succeeded, every attempt failed (none in the measured window)"
		}
		if e := r.FirstError(report.ErrorDenied); e != nil {
			return msg + "; the Redis user lacks a permission lockbench needs (" + e.Message + "): it needs the keys ~lockbench:*, the channels &lockbench:* and the commands its strategies send, e.g. ACL SETUSER NAME ~lockbench:* &lockbench:* +@all"
		}
		if len(r.FirstErrors) > 0 {
			msg += "; first error: " + r.FirstErrors[0].Message
		}
		return msg
	}
	return ""
}
