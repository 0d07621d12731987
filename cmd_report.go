package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	usageerr "github.com/lockbench/lockbench/internal/usage"
	"github.com/lockbench/lockbench/plot"
	"github.com/lockbench/lockbench/report"
	htmlreport "github.com/lockbench/lockbench/report/html"
)

// reportCmd works on result files written with --format json.
func reportCmd(args []string, stdout, stderr io.Writer) error {
	subs := map[string]func([]string, io.Writer) error{
		"plot": reportPlot, "compare": reportCompare, "merge": reportMerge, "html": reportHTML,
	}
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprint(stdout, "Usage: lockbench report plot|compare|merge|html ...\n\n"+
			"Works on result files written with --format json:\n"+
			"  plot RESULT.json -o FILE          draw a result (.png or .svg)\n"+
			"  compare A.json B.json             per-strategy ratios B/A; flag regressions\n"+
			"  merge A.json B.json ...           combine the results of processes that ran together (--node)\n"+
			"  html RESULT.json ... -o FILE      one self-contained HTML report to share (several files: merged first)\n")
		if len(args) == 0 {
			return usageErrorf("missing subcommand: plot, compare, merge or html")
		}
		return nil
	}
	sub, ok := subs[args[0]]
	if !ok {
		return usageErrorf("unknown report subcommand %q; valid: plot, compare, merge, html", args[0])
	}
	return sub(args[1:], stdout)
}

func reportPlot(args []string, stdout io.Writer) error {
	fs := newFlags("report plot RESULT.json -o FILE", "Draws a result file: the latency distribution per strategy, the per-second timeline with\nfault events, sweep and capacity curves. The format follows the extension: .png or .svg.", stdout)
	out := fs.StringP("out", "o", "", "the image to write (.png or .svg)")
	if err := parseFiles(fs, args, 1, 1); err != nil {
		return err
	}
	if *out == "" {
		return usageErrorf("-o FILE is required")
	}
	if err := plot.CheckPath(*out); err != nil {
		return &usageError{err}
	}
	if err := checkReportOutput("plot", *out, fs.Args()); err != nil {
		return err
	}
	s, err := readSummary(fs.Arg(0))
	if err != nil {
		return err
	}
	return plot.Write(*out, s)
}

func reportCompare(args []string, stdout io.Writer) error {
	fs := newFlags("report compare A.json B.json [flags]", "Compares two result files strategy by strategy (B relative to A) and flags regressions:\nacquire rate down, latency or Redis cost up by more than the threshold, or overlaps or\nstuck keys where A had none.", stdout)
	threshold := fs.Float64("threshold", report.DefaultCompareThreshold*100, "percent change that counts as a regression")
	fail := fs.Bool("fail-on-regression", false, "exit 4 when a regression is found (for CI)")
	format := fs.StringP("format", "f", "table", "table or json")
	if err := parseFiles(fs, args, 2, 2); err != nil {
		return err
	}
	if *threshold < 0 {
		return usageErrorf("invalid --threshold %v: must be a percentage >= 0", *threshold)
	}
	a, err := readSummary(fs.Arg(0))
	if err != nil {
		return err
	}
	b, err := readSummary(fs.Arg(1))
	if err != nil {
		return err
	}
	c, err := report.Compare(a, b, report.CompareOptions{Threshold: *threshold / 100})
	if err != nil {
		return &usageError{err} // the two files do not compare: the input is the problem
	}
	c.A, c.B, c.Version = fs.Arg(0), fs.Arg(1), versionString()
	switch *format {
	case "table":
		err = report.ComparisonTable(stdout, c)
	case "json":
		err = report.ComparisonJSON(stdout, c)
	default:
		return usageErrorf("invalid --format %q: valid: table, json", *format)
	}
	if err != nil {
		return err
	}
	if *fail && len(c.Regressions) > 0 {
		return &exitError{code: exitRegression, msg: fmt.Sprintf("%d regression(s): %s", len(c.Regressions), strings.Join(c.Regressions, "; "))}
	}
	return nil
}

func reportMerge(args []string, stdout io.Writer) error {
	fs := newFlags("report merge A.json B.json ... [flags]", "Combines the result files of processes that ran the same workload together (--node I/N\n"+
		"--barrier NAME): counts add up, HDR histograms are merged (not percentiles averaged).\n\n"+
		"The files must come from one run: the same phases, the same target (mode, topology and\n"+
		"--redis addresses as given, in any order) and run windows that overlap (started_at plus\n"+
		"the phases' warm-up and duration). Merge refuses others with exit 2, naming the file that\n"+
		"differs; --force merges different targets or times anyway and notes what differed.", stdout)
	format := fs.StringP("format", "f", "json", "report format: "+strings.Join(report.Formats(), ", "))
	out := fs.StringP("out", "o", "", "write to this file instead of stdout")
	force := fs.Bool("force", false, "merge results of different targets or non-overlapping run windows (never of different phases)")
	hdrDir := fs.String("hdr-dir", "", "also write the merged <name>.hgrm and <name>.hlog here, one pair per phase (from the per-second histograms the files carry)")
	if err := parseFiles(fs, args, 1, -1); err != nil {
		return err
	}
	write, err := report.Lookup(*format)
	if err != nil {
		return err
	}
	if *out == "-" {
		*out = "" // stdout, as for run
	}
	if err := checkReportOutput("merge", *out, fs.Args()); err != nil {
		return err
	}
	if *hdrDir != "" {
		if err := os.MkdirAll(*hdrDir, 0o755); err != nil {
			return usageErrorf("--hdr-dir %s: cannot be created: %v", *hdrDir, unwrapPath(err))
		}
	}
	merged, err := mergeResults(fs.Args(), report.MergeOptions{Force: *force})
	if err != nil {
		return err
	}
	if *hdrDir != "" {
		if _, err := report.WriteHDRFiles(*hdrDir, merged); err != nil {
			return err
		}
	}
	return writeReport(merged, write, *out, stdout)
}

// checkReportOutput checks, before any input is read, that the output file of report sub
// is none of its inputs (a result written over is lost) and can be written at all: a
// directory that does not exist is a usage error (exit 2), as it is for run --plot.
func checkReportOutput(sub, out string, inputs []string) error {
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
			return usageErrorf("-o %s is the input %s: report %s would write over it; name another file", out, in, sub)
		}
	}
	if err := probeFile(out); err != nil {
		return usageErrorf("-o %s: cannot be written: %v", out, unwrapPath(err))
	}
	return nil
}

// parseFiles parses flags and checks the number of file arguments (max < 0: no limit).
func parseFiles(fs *pflag.FlagSet, args []string, minArgs, maxArgs int) error {
	if err := fs.Parse(args); err != nil {
		if isHelp(err) {
			return err // pflag has printed the usage
		}
		return flagError(err)
	}
	if n := fs.NArg(); n < minArgs || (maxArgs >= 0 && n > maxArgs) {
		want := fmt.Sprint(minArgs)
		switch {
		case maxArgs < 0:
			want = fmt.Sprintf("at least %d", minArgs)
		case maxArgs != minArgs:
			want = fmt.Sprintf("%d to %d", minArgs, maxArgs)
		}
		return usageErrorf("want %s result file(s), got %d", want, n)
	}
	return nil
}

func readSummary(path string) (*report.Summary, error) {
	b, err := report.ReadFile(path)
	if err != nil {
		if usageerr.Is(err) {
			return nil, err
		}
		return nil, usageErrorf("%s: cannot be read: %v (want a result file written with --format json)", path, unwrapPath(err))
	}
	var s report.Summary
	if err := json.Unmarshal(b, &s); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return nil, usageErrorf("%s is not a lockbench JSON result (--format json): its field %q holds a JSON %s of the wrong kind", path, te.Field, te.Value)
		}
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, usageErrorf("%s is not a lockbench JSON result (--format json): not valid JSON at byte %d", path, se.Offset)
		}
		return nil, usageErrorf("%s is not a lockbench JSON result (--format json)", path)
	}
	if s.Tool != "lockbench" {
		return nil, usageErrorf("%s is not a lockbench JSON result (--format json)", path)
	}
	if s.Kind == report.KindComparison {
		return nil, usageErrorf("%s is the output of report compare, not a result (--format json of run, sweep or capacity)", path)
	}
	if s.SchemaVersion > report.SchemaVersion {
		return nil, usageErrorf("%s is in result schema version %d, written by a newer lockbench; this one (%s) reads versions up to %d: upgrade it",
			path, s.SchemaVersion, versionString(), report.SchemaVersion)
	}
	return &s, nil
}

func reportHTML(args []string, stdout io.Writer) error {
	fs := newFlags("report html RESULT.json... -o FILE", "Writes one self-contained HTML report, readable offline, to share: a run, sweep or capacity\n"+
		"result (--format json), several results of one multi-process run (merged first, as\n"+
		"'report merge' does), or the JSON of 'report compare' (the two runs side by side).", stdout)
	out := fs.StringP("out", "o", "", "the HTML file to write (- for stdout)")
	if err := parseFiles(fs, args, 1, -1); err != nil {
		return err
	}
	if *out == "" {
		return usageErrorf("-o FILE is required (- for stdout)")
	}
	if *out != "-" {
		if err := checkReportOutput("html", *out, fs.Args()); err != nil {
			return err
		}
	}
	write := func(render func(io.Writer) error) error {
		if *out == "-" {
			return render(stdout)
		}
		return writeHTML(*out, render)
	}
	if fs.NArg() == 1 {
		if c, ok, err := readComparison(fs.Arg(0)); err != nil || ok {
			if err != nil {
				return err
			}
			return write(func(w io.Writer) error { return htmlreport.WriteComparison(w, c) })
		}
	}
	var sum *report.Summary
	var err error
	if fs.NArg() == 1 {
		sum, err = readSummary(fs.Arg(0))
	} else {
		sum, err = mergeResults(fs.Args(), report.MergeOptions{})
	}
	if err != nil {
		return err
	}
	return write(func(w io.Writer) error { return htmlreport.Write(w, sum) })
}

// readComparison reads path as the JSON of 'report compare'; ok is false when it is
// something else (a result, read by readSummary).
func readComparison(path string) (*report.Comparison, bool, error) {
	b, err := report.ReadFile(path)
	if err != nil {
		if usageerr.Is(err) {
			return nil, false, err
		}
		return nil, false, usageErrorf("%s: cannot be read: %v", path, unwrapPath(err))
	}
	var head struct {
		Kind string `json:"kind"`
	}
	if json.Unmarshal(b, &head) != nil || head.Kind != report.KindComparison {
		return nil, false, nil
	}
	var c report.Comparison
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, false, usageErrorf("%s is not the JSON of 'report compare': %v", path, err)
	}
	return &c, true, nil
}

// mergeFiles reads the result files and merges them (one file is returned as it is). Files
// that do not belong together are a usage error (exit 2) that says which input is which.
func mergeResults(paths []string, opt report.MergeOptions) (*report.Summary, error) {
	var all []*report.Summary
	for _, path := range paths {
		s, err := readSummary(path)
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
		return nil, usageErrorf("%w\ninputs: %s", err, strings.Join(inputs, ", "))
	}
	return merged, err
}
