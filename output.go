package main

// The report and its extra files, and the exit code a finished run maps to.

import (
	"fmt"
	"io"

	"github.com/lockbench/lockbench/plot"
	"github.com/lockbench/lockbench/report"
	htmlreport "github.com/lockbench/lockbench/report/html"
)

// writeOutputs writes the report and the extra files the flags ask for, and maps the
// outcome to an exit code: interrupted (130) before unsafe (3).
func (f *loadFlags) writeOutputs(sum *report.Summary, stdout io.Writer) error {
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
	if f.html != "" {
		if err := writeHTML(f.html, func(w io.Writer) error { return htmlreport.Write(w, sum) }); err != nil {
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
	if msg := failedPhase(sum.Results); msg != "" {
		return &exitError{code: exitFailure, msg: msg}
	}
	if msg := f.maxErrors.exceeded(sum.Results); msg != "" {
		return &exitError{code: exitErrors, msg: msg}
	}
	if msg := inconclusivePhase(sum.Results); msg != "" {
		return &exitError{code: exitInconclusive, msg: msg}
	}
	return nil
}

// exitInconclusive: a phase's verdict is inconclusive (report.Verdict): the lock server
// denied a command or did not answer, or too little was acquired to judge.
const exitInconclusive = 6

// inconclusivePhase is one line about the first inconclusive phase — its verdict and what
// to do about it — "" when none is. It reads the typed results, never their notes.
func inconclusivePhase(results []report.Result) string {
	for _, r := range results {
		if !report.IsInconclusive(r.Verdict) {
			continue
		}
		msg := resultName(r) + ": " + r.Verdict
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
		msg := fmt.Sprintf("%s: no acquire succeeded, every attempt failed (%d errors)", resultName(r), r.Errors)
		if r.Errors == 0 {
			msg = resultName(r) + ": no acquire succeeded, every attempt failed (none in the measured window)"
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
