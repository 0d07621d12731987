package main

// The report and its extra files, and the exit code a finished run maps to.

import (
	"fmt"
	"io"
	"os"

	"github.com/lockbench/lockbench/plot"
	"github.com/lockbench/lockbench/report"
)

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
