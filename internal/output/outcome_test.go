package output

import (
	"bytes"
	"errors"
	"testing"

	"github.com/lockbench/lockbench/internal/cmdline"
	"github.com/lockbench/lockbench/report"
)

// The report is written whatever the outcome, and the outcome maps to one exit code, in
// this order: interrupted, unsafe (with --fail-on-unsafe), a phase that measured nothing,
// --max-errors, inconclusive.
func TestWriteMapsTheOutcomeToItsExitCode(t *testing.T) {
	safe := report.Result{Strategy: "token", Verdict: "safe", Acquired: 10}
	unsafe := report.Result{Strategy: "set-nx-del", Verdict: "UNSAFE: 3 overlaps", Acquired: 10}
	failed := report.Result{Strategy: "token", Label: "ttl=1s", Errors: 4}
	inconclusive := report.Result{Strategy: "token", Verdict: "inconclusive: only 1 acquired", Acquired: 1}
	tooMany := func([]report.Result) string { return "too many" }
	for _, tc := range []struct {
		name        string
		opt         Options
		results     []report.Result
		interrupted bool
		code        int
	}{
		{"safe", Options{}, []report.Result{safe}, false, cmdline.ExitOK},
		{"unsafe without the flag", Options{}, []report.Result{unsafe}, false, cmdline.ExitOK},
		{"unsafe", Options{FailOnUnsafe: true}, []report.Result{safe, unsafe}, false, cmdline.ExitUnsafe},
		{"interrupted first", Options{FailOnUnsafe: true}, []report.Result{unsafe}, true, cmdline.ExitInterrupted},
		{"nothing measured", Options{MaxErrors: tooMany}, []report.Result{failed}, false, cmdline.ExitFailure},
		{"max errors", Options{MaxErrors: tooMany}, []report.Result{safe}, false, cmdline.ExitErrors},
		{"inconclusive", Options{}, []report.Result{inconclusive}, false, cmdline.ExitInconclusive},
	} {
		tc.opt.Format = "json"
		var out bytes.Buffer
		err := tc.opt.Write(&report.Summary{Tool: "lockbench", Results: tc.results, Interrupted: tc.interrupted}, &out)
		code := cmdline.ExitOK
		var ee *cmdline.ExitError
		if errors.As(err, &ee) {
			code = ee.Code
		} else if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if code != tc.code || out.Len() == 0 {
			t.Errorf("%s: exit %d (%v), %d bytes of report; want exit %d and the report", tc.name, code, err, out.Len(), tc.code)
		}
	}
}
