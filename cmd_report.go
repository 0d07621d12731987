package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/lockbench/lockbench/internal/cmdline"
	"github.com/lockbench/lockbench/internal/output"
	"github.com/lockbench/lockbench/internal/usage"
	"github.com/lockbench/lockbench/plot"
	"github.com/lockbench/lockbench/report"
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
	if err := cmdline.ParseFiles(fs, args, 1, 1); err != nil {
		return err
	}
	if *out == "" {
		return usageErrorf("-o FILE is required")
	}
	if err := plot.CheckPath(*out); err != nil {
		return &usage.Error{Err: err}
	}
	if err := output.CheckReportOutput("plot", *out, fs.Args()); err != nil {
		return err
	}
	s, err := output.ReadSummary(fs.Arg(0))
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
	if err := cmdline.ParseFiles(fs, args, 2, 2); err != nil {
		return err
	}
	opts, err := output.CompareOptions(*threshold)
	if err != nil {
		return err
	}
	a, err := output.ReadSummary(fs.Arg(0))
	if err != nil {
		return err
	}
	b, err := output.ReadSummary(fs.Arg(1))
	if err != nil {
		return err
	}
	c, err := report.Compare(a, b, opts)
	if err != nil {
		return &usage.Error{Err: err} // the two files do not compare: the input is the problem
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
		return cmdline.Exit(exitRegression, fmt.Sprintf("%d regression(s): %s", len(c.Regressions), strings.Join(c.Regressions, "; ")))
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
	if err := cmdline.ParseFiles(fs, args, 1, -1); err != nil {
		return err
	}
	write, err := report.Lookup(*format)
	if err != nil {
		return err
	}
	if *out == "-" {
		*out = "" // stdout, as for run
	}
	if err := output.CheckReportOutput("merge", *out, fs.Args()); err != nil {
		return err
	}
	if *hdrDir != "" {
		if err := os.MkdirAll(*hdrDir, 0o755); err != nil {
			return usageErrorf("--hdr-dir %s: cannot be created: %v", *hdrDir, output.UnwrapPath(err))
		}
	}
	merged, err := output.MergeFiles(fs.Args(), report.MergeOptions{Force: *force})
	if err != nil {
		return err
	}
	if *hdrDir != "" {
		if _, err := report.WriteHDRFiles(*hdrDir, merged); err != nil {
			return err
		}
	}
	return output.WriteReport(merged, write, *out, stdout)
}

func reportHTML(args []string, stdout io.Writer) error {
	fs := newFlags("report html RESULT.json... -o FILE", "Writes one self-contained HTML report, readable offline, to share: a run, sweep or capacity\n"+
		"result (--format json), several results of one multi-process run (merged first, as\n"+
		"'report merge' does), or the JSON of 'report compare' (the two runs side by side).", stdout)
	out := fs.StringP("out", "o", "", "the HTML file to write (- for stdout)")
	if err := cmdline.ParseFiles(fs, args, 1, -1); err != nil {
		return err
	}
	if *out == "" {
		return usageErrorf("-o FILE is required (- for stdout)")
	}
	if *out != "-" {
		if err := output.CheckReportOutput("html", *out, fs.Args()); err != nil {
			return err
		}
	}
	render, err := output.HTMLReport(fs.Args())
	if err != nil {
		return err
	}
	if *out == "-" {
		return render(stdout)
	}
	return output.WriteHTML(*out, render)
}
