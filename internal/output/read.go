package output

// Reading result files back: report plot, compare, merge and html, and a --procs fleet's
// parent reading its children's results.

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/lockbench/lockbench/internal/buildinfo"
	"github.com/lockbench/lockbench/internal/usage"
	"github.com/lockbench/lockbench/report"
)

// ReadSummary reads a result file written with --format json. A file that is not one is a
// usage error (exit 2) that says what it is instead.
func ReadSummary(path string) (*report.Summary, error) {
	b, err := report.ReadFile(path)
	if err != nil {
		if usage.Is(err) {
			return nil, err
		}
		return nil, usage.Errorf("%s: cannot be read: %v (want a result file written with --format json)", path, UnwrapPath(err))
	}
	var s report.Summary
	if err := json.Unmarshal(b, &s); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return nil, usage.Errorf("%s is not a lockbench JSON result (--format json): its field %q holds a JSON %s of the wrong kind", path, te.Field, te.Value)
		}
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, usage.Errorf("%s is not a lockbench JSON result (--format json): not valid JSON at byte %d", path, se.Offset)
		}
		return nil, usage.Errorf("%s is not a lockbench JSON result (--format json)", path)
	}
	if s.Tool != "lockbench" {
		return nil, usage.Errorf("%s is not a lockbench JSON result (--format json)", path)
	}
	if s.Kind == report.KindComparison {
		return nil, usage.Errorf("%s is the output of report compare, not a result (--format json of run, sweep or capacity)", path)
	}
	if s.SchemaVersion > report.SchemaVersion {
		return nil, usage.Errorf("%s is in result schema version %d, written by a newer lockbench; this one (%s) reads versions up to %d: upgrade it",
			path, s.SchemaVersion, buildinfo.Version(), report.SchemaVersion)
	}
	return &s, nil
}

// ReadComparison reads path as the JSON of 'report compare'; ok is false when it is
// something else (a result, read by ReadSummary).
func ReadComparison(path string) (*report.Comparison, bool, error) {
	b, err := report.ReadFile(path)
	if err != nil {
		if usage.Is(err) {
			return nil, false, err
		}
		return nil, false, usage.Errorf("%s: cannot be read: %v", path, UnwrapPath(err))
	}
	var head struct {
		Kind string `json:"kind"`
	}
	if json.Unmarshal(b, &head) != nil || head.Kind != report.KindComparison {
		return nil, false, nil
	}
	var c report.Comparison
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, false, usage.Errorf("%s is not the JSON of 'report compare': %v", path, err)
	}
	return &c, true, nil
}

// MergeFiles reads the result files and merges them (one file is returned as it is). Files
// that do not belong together are a usage error (exit 2) that says which input is which.
func MergeFiles(paths []string, opt report.MergeOptions) (*report.Summary, error) {
	var all []*report.Summary
	for _, path := range paths {
		s, err := ReadSummary(path)
		if err != nil {
			return nil, err
		}
		all = append(all, s)
	}
	merged, err := report.Merge(all, opt)
	var refused *report.MergeError
	if errors.As(err, &refused) {
		// The reason counts inputs from 1; say which file each is.
		inputs := make([]string, len(paths))
		for i, path := range paths {
			inputs[i] = fmt.Sprintf("%d = %s", i+1, path)
		}
		return nil, usage.Errorf("%w\ninputs: %s", err, strings.Join(inputs, ", "))
	}
	return merged, err
}

// CheckReportOutput checks, before any input is read, that the output file of report sub
// is none of its inputs (a result written over is lost) and can be written at all: a
// directory that does not exist is a usage error (exit 2), as it is for run --plot.
func CheckReportOutput(sub, out string, inputs []string) error {
	if out == "" {
		return nil
	}
	outAbs, _ := filepath.Abs(out)
	outInfo, outErr := os.Stat(out)
	for _, in := range inputs {
		inAbs, _ := filepath.Abs(in)
		same := outAbs == inAbs
		if !same && outErr == nil {
			inInfo, err := os.Stat(in)
			same = err == nil && os.SameFile(outInfo, inInfo)
		}
		if same {
			return usage.Errorf("-o %s is the input %s: report %s would write over it; name another file", out, in, sub)
		}
	}
	if err := ProbeFile(out); err != nil {
		return usage.Errorf("-o %s: cannot be written: %v", out, UnwrapPath(err))
	}
	return nil
}
