package output

import (
	"io"

	"github.com/lockbench/lockbench/internal/usage"
	"github.com/lockbench/lockbench/report"
	htmlreport "github.com/lockbench/lockbench/report/html"
)

// HTMLReport reads what 'report html' was given and returns how to render it: the JSON of
// 'report compare' (one file: the two runs side by side), one result, or several results
// of one multi-process run, merged first as 'report merge' does.
func HTMLReport(files []string) (func(io.Writer) error, error) {
	if len(files) == 1 {
		c, ok, err := ReadComparison(files[0])
		if err != nil {
			return nil, err
		}
		if ok {
			return func(w io.Writer) error { return htmlreport.WriteComparison(w, c) }, nil
		}
	}
	var sum *report.Summary
	var err error
	if len(files) == 1 {
		sum, err = ReadSummary(files[0])
	} else {
		sum, err = MergeFiles(files, report.MergeOptions{})
	}
	if err != nil {
		return nil, err
	}
	return func(w io.Writer) error { return htmlreport.Write(w, sum) }, nil
}

// CompareOptions are 'report compare's options from its --threshold, a percentage.
func CompareOptions(thresholdPercent float64) (report.CompareOptions, error) {
	if thresholdPercent < 0 {
		return report.CompareOptions{}, usage.Errorf("invalid --threshold %v: must be a percentage >= 0", thresholdPercent)
	}
	return report.CompareOptions{Threshold: thresholdPercent / 100}, nil
}
