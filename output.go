package main

// The report and its extra files, and the exit code a finished run maps to.

import (
	"fmt"
	"io"
	"strings"

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

// failedPhase describes the first phase in which every attempt failed with an error — no
// acquire, nothing but Redis or network errors — "" when none did: such a run measured
// nothing, and its exit code must say so (1, like any runtime failure).
func failedPhase(results []report.Result) string {
	for _, r := range results {
		if r.Acquired > 0 || r.Errors == 0 || r.Timeouts > 0 {
			continue
		}
		first := ""
		for _, n := range r.Notes {
			if e, ok := strings.CutPrefix(n, "first error: "); ok {
				first = e
				break
			}
		}
		msg := fmt.Sprintf("%s: no acquire succeeded, every attempt failed (%d errors)", resultName(r), r.Errors)
		if strings.Contains(first, "NOPERM") {
			return msg + "; the Redis user lacks a permission lockbench needs (" + first + "): it needs the keys ~lockbench:*, the channels &lockbench:* and the commands its strategies send, e.g. ACL SETUSER NAME ~lockbench:* &lockbench:* +@all"
		}
		if first != "" {
			msg += "; first error: " + first
		}
		return msg
	}
	return ""
}
