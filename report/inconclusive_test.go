package report

import (
	"bytes"
	"strings"
	"testing"
)

// Verdict: inconclusive, never safe, when the lock server denied a command or did not answer
// at the window's end, or too little was acquired; UNSAFE and DEADLOCK stand whatever else.
func TestVerdictInconclusive(t *testing.T) {
	denied := []PhaseError{{Kind: ErrorDenied, Op: OpRelease, Right: "+@scripting", Message: "NOPERM ... 'evalsha'"}}
	probe := []PhaseError{{Kind: ErrorTimeout, Op: OpProbe, Message: "INFO: context deadline exceeded"}}
	for _, tc := range []struct {
		name string
		r    Result
		want string
	}{
		{"clean", Result{Acquired: 100}, "safe"},
		{"denied", Result{Acquired: 100, ErrorsByKind: &ErrorKinds{Denied: 3}, FirstErrors: denied},
			"inconclusive: the lock server denied 3 commands (the user lacks +@scripting)"},
		{"denied in the warm-up, nothing acquired", Result{FirstErrors: denied},
			"inconclusive: the lock server denied commands (the user lacks +@scripting)"},
		{"frozen", Result{Acquired: 100, FirstErrors: probe},
			"inconclusive: the lock server did not answer at the window's end (timeout: frozen or unreachable)"},
		{"one acquire", Result{Acquired: 1}, "inconclusive: only 1 acquired (a verdict needs 2)"},
		{"nothing acquired", Result{}, VerdictNoData},
		{"a timeout error alone is no reason", Result{Acquired: 100, FirstErrors: []PhaseError{{Kind: ErrorTimeout, Op: OpAcquire}}}, "safe"},
		{"unsafe stands", Result{Acquired: 100, Safety: Safety{Overlaps: 2}, FirstErrors: denied}, "UNSAFE: 2 overlaps"},
		{"deadlock stands", Result{Acquired: 1, Safety: Safety{StuckKeys: 1}, FirstErrors: probe}, "DEADLOCK: 1 key stuck"},
	} {
		if got := Verdict(&tc.r); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// Phases that waited differently name their wait on every row, labelled ones too, and the
// header says so; a header whose phases all wait (and renew) their own way says own.
func TestTableNamesEachRowsWait(t *testing.T) {
	s := &Summary{Tool: "lockbench", Config: Config{Workers: 4, Keys: 1, TTLMS: 10000, Watchdog: "off", Wait: "backoff:1ms..50ms"},
		Results: []Result{
			{Strategy: "token", Label: "hot", Wait: "pubsub", Acquired: 10, Verdict: "safe"},
			{Strategy: "token", Label: "cold", Wait: "backoff:1ms..50ms", Acquired: 10, Verdict: "safe"},
		}}
	var out bytes.Buffer
	if err := ResultsTable(&out, s); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"wait per row", "token hot wait=pubsub ", "token cold wait=backoff:1ms..50ms "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}

	s.Results = []Result{{Strategy: "etcd-mutex", Wait: OwnText, Own: []string{"wait", "watchdog"}, Acquired: 10, Verdict: "safe"}}
	out.Reset()
	if err := ResultsTable(&out, s); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "watchdog own, wait own") || strings.Contains(out.String(), "backoff") {
		t.Errorf("a service-only run's header:\n%s", out.String())
	}
}

// The errors' kinds show beside their count, the first error of each kind below it, and the
// legend explains inconclusive when a row reads it.
func TestTableShowsErrorKinds(t *testing.T) {
	s := &Summary{Tool: "lockbench", Config: Config{Workers: 4, Keys: 1, Wait: "pubsub"}, Results: []Result{{
		Strategy: "token", Wait: "pubsub", Acquired: 10, Errors: 5,
		ErrorsByKind: &ErrorKinds{Denied: 4, Timeout: 1},
		FirstErrors: []PhaseError{
			{Kind: ErrorDenied, Op: OpAcquire, Right: "&lockbench:*", Message: "NOPERM channels"},
			{Kind: ErrorTimeout, Op: OpAcquire, Message: "i/o timeout"},
		},
	}}}
	s.Results[0].Verdict = Verdict(&s.Results[0])
	var out bytes.Buffer
	if err := ResultsTable(&out, s); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"token: first error: NOPERM channels", "token: first timeout error: i/o timeout",
		"5 lock-server or network errors (4 denied, 1 timeout)", "  inconclusive = the run cannot support a verdict",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
}

// A merge adds the kinds and keeps the first error of each, and judges the merged phase.
func TestMergeKeepsErrorKinds(t *testing.T) {
	a := &ErrorKinds{Denied: 1}
	b := &ErrorKinds{Denied: 2, Timeout: 1}
	if got := mergeErrorKinds(mergeErrorKinds(nil, a), b); *got != (ErrorKinds{Denied: 3, Timeout: 1}) || mergeErrorKinds(nil, nil) != nil {
		t.Errorf("merged kinds %+v", got)
	}
	first := mergeFirstErrors([]PhaseError{{Kind: ErrorDenied, Op: OpAcquire, Message: "a"}},
		[]PhaseError{{Kind: ErrorDenied, Op: OpAcquire, Message: "b"}, {Kind: ErrorTimeout, Op: OpProbe, Message: "c"}})
	if len(first) != 2 || first[0].Message != "a" || first[1].Op != OpProbe {
		t.Errorf("merged first errors %+v", first)
	}
}
