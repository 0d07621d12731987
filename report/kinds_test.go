package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// Tests of the fields added for faults, verdicts, sweeps and capacity searches.

func TestLabelName(t *testing.T) {
	tests := []struct {
		strategy, label, want string
	}{
		{"token", "", "token"},
		{"token", "token ttl=200ms", "token ttl=200ms"},
		{"token", "token", "token"},
		{"token", "gc-pause", "token gc-pause"},
		{"token", "tokenish", "token tokenish"},
	}
	for _, tt := range tests {
		if got := labelName(&Result{Strategy: tt.strategy, Label: tt.label}); got != tt.want {
			t.Errorf("labelName(%q, %q) = %q, want %q", tt.strategy, tt.label, got, tt.want)
		}
	}
}

// TestResultLabelsPreferLabel: a labeled result is named by its label; unlabeled ones still
// get their varying settings.
func TestResultLabelsPreferLabel(t *testing.T) {
	results := []Result{
		{Strategy: "token", Label: "token wd=auto", TTLMS: 1000, WatchdogMS: 333},
		{Strategy: "token", TTLMS: 1000},
		{Strategy: "token", TTLMS: 5000},
	}
	want := []string{"token wd=auto", "token ttl=1s", "token ttl=5s"}
	if got := resultLabels(results); !slices.Equal(got, want) {
		t.Errorf("resultLabels = %q, want %q", got, want)
	}
}

func TestEventsNoteCapped(t *testing.T) {
	r := Result{Strategy: "redlock", Events: []Event{
		{TS: 1, What: "node 2 paused for 2s"},
		{TS: 3, What: "node 2 resumed"},
		{TS: 4.25, Fault: "node-kill:1@4s"}, // no What: the fault spec stands in
		{TS: 6, What: "node 1 restarted"},
		{TS: 7, What: "node 0 killed"},
	}}
	notes := resultNotes("redlock", &r, nil)
	want := "redlock: events: 5 — node 2 paused for 2s at 1.0s, node 2 resumed at 3.0s, node-kill:1@4s at 4.2s, +2 more"
	if !slices.Contains(notes, want) {
		t.Errorf("notes = %q, want %q", notes, want)
	}
}

func TestFaultsNoteOnlyWhenNotTheRuns(t *testing.T) {
	r := Result{Strategy: "token", Faults: []string{"pause:redis@3s+2s"}}
	if notes := resultNotes("token", &r, []string{"pause:redis@3s+2s"}); len(notes) != 0 {
		t.Errorf("the run's faults repeated per result: %q", notes)
	}
	if notes := resultNotes("token", &r, nil); !slices.Contains(notes, "token: faults: pause:redis@3s+2s") {
		t.Errorf("a phase's own faults not noted: %q", notes)
	}
}

// TestOverlapsNotedWithoutVerdict: with no verdict (older engine, a failed phase), the
// overlap count, which has no column, is in the notes.
func TestOverlapsNotedWithoutVerdict(t *testing.T) {
	s := testSummary()
	s.Results[1].Verdict = ""
	var buf bytes.Buffer
	if err := ResultsTable(&buf, s); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "set-nx-del: 3 overlaps (two holders inside one key at once), 2 lock-server or network errors") {
		t.Errorf("overlaps of a result without verdict are not noted:\n%s", buf.String())
	}
}

func TestSweepTableGroupsByStrategy(t *testing.T) {
	var buf bytes.Buffer
	if err := ResultsTable(&buf, kindSweepSummary()); err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, line := range strings.Split(buf.String(), "\n") {
		if f := strings.Fields(line); len(f) > 1 && (f[1] == "token" || f[1] == "fenced") {
			rows = append(rows, f[0]+" "+f[1])
		}
	}
	want := []string{"200ms token", "1s token", "5s token", "200ms fenced", "1s fenced", "5s fenced"}
	if !slices.Equal(rows, want) {
		t.Errorf("sweep rows = %q, want %q", rows, want)
	}
	for _, w := range []string{"TTL    STRATEGY", "lock:      ttl swept,", "recommend: token: ttl >= 5s"} {
		if !strings.Contains(buf.String(), w) {
			t.Errorf("sweep table lacks %q:\n%s", w, buf.String())
		}
	}
}

// TestSweepNamesAmbiguous: when a strategy has two results for one value, its rows show the
// full labels.
func TestSweepNamesAmbiguous(t *testing.T) {
	results := []Result{
		{Strategy: "token", Label: "token wd=off", ParamValue: "1s"},
		{Strategy: "token", Label: "token wd=auto", ParamValue: "1s"},
		{Strategy: "fenced", Label: "fenced ttl=1s", ParamValue: "1s"},
	}
	got := sweepNames(results, resultLabels(results))
	want := []string{"token wd=off", "token wd=auto", "fenced"}
	if !slices.Equal(got, want) {
		t.Errorf("sweepNames = %q, want %q", got, want)
	}
}

func TestCapacityAnswer(t *testing.T) {
	tests := []struct {
		c    Capacity
		want string
	}{
		{Capacity{Strategy: "token", SLO: "p99<=5ms timeouts<=0.1%", MaxRate: 42100, CPUPercentAtMax: 87},
			"token: max 42.1k acquires/s within p99<=5ms timeouts<=0.1% (Redis CPU 87% of a core)"},
		{Capacity{Strategy: "token", SLO: "p99<=5ms", MaxRate: 950}, "token: max 950 acquires/s within p99<=5ms"},
		{Capacity{Strategy: "redlock", SLO: "p99<=5ms"}, "redlock: no step passed (SLO p99<=5ms)"},
		{Capacity{Strategy: "token", SLO: "p99<=5ms", MaxRate: 42100, CPUPercentAtMax: 95, Bound: "redis-cpu",
			BoundBy: "Redis CPU 96% of a core at 45k/s (lockbench 1.2/2)"},
			"token: max 42.1k acquires/s within p99<=5ms (Redis CPU 95% of a core); bound by Redis CPU 96% of a core at 45k/s (lockbench 1.2/2)"},
		// A client-bound figure is never the server's capacity.
		{Capacity{Strategy: "token", SLO: "p99<=5ms", MaxRate: 30000, CPUPercentAtMax: 40, Bound: "lockbench-cpu", ClientBound: true,
			BoundBy: "lockbench: 1.0 of 1 cores busy at 35k/s (Redis CPU 45%) — add --procs or machines"},
			"token: at least 30k acquires/s within p99<=5ms (Redis CPU 40% of a core): lockbench's limit, not Redis's capacity; " +
				"bound by lockbench: 1.0 of 1 cores busy at 35k/s (Redis CPU 45%) — add --procs or machines"},
	}
	for _, tt := range tests {
		if got := CapacityAnswer(tt.c); got != tt.want {
			t.Errorf("CapacityAnswer = %q, want %q", got, tt.want)
		}
	}
}

// TestCapacityEmpty: a capacity search without steps still reports, and says so.
func TestCapacityEmpty(t *testing.T) {
	s := capacitySummary()
	s.Capacity = nil
	for _, r := range []Reporter{ResultsTable, Markdown, CSV, JSON} {
		var buf bytes.Buffer
		if err := r(&buf, s); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	_ = ResultsTable(&buf, s)
	if !strings.Contains(buf.String(), "note: the capacity search has no steps") {
		t.Errorf("an empty capacity search does not say so:\n%s", buf.String())
	}
}

func TestCSVNewColumns(t *testing.T) {
	s := kindSweepSummary()
	s.Results[0].Safety.StuckKeys = 4
	records := csvRecords(t, s)
	header := records[0]
	col := func(name string) int {
		i := slices.Index(header, name)
		if i < 0 {
			t.Fatalf("header lacks %q: %v", name, header)
		}
		return i
	}
	first := records[1]
	for name, want := range map[string]string{
		"label": "token ttl=200ms", "param_value": "200ms", "verdict": "UNSAFE: 41 overlaps",
		"stuck_keys": "4", "overlaps": "41",
	} {
		if got := first[col(name)]; got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
}

func TestCSVCapacity(t *testing.T) {
	s := capacitySummary()
	records := csvRecords(t, s)
	if len(records) != 1+8+1 {
		t.Fatalf("%d records, want a header and one row per step (9)", len(records))
	}
	header := records[0]
	col := func(name string) string { return records[4][slices.Index(header, name)] } // token's 4th step
	for name, want := range map[string]string{
		"strategy": "token", "step": "4", "stage": "ramp", "offered_per_s": "80000", "achieved_per_s": "48800",
		"p99_us": "61000", "pass": "false", "reason": "achieved 61% of offered", "max_rate_per_s": "42100",
	} {
		if got := col(name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	if last := records[9]; last[0] != "redlock" {
		t.Errorf("last row strategy = %q, want redlock", last[0])
	}
}

// csvRecords runs the CSV reporter on s and parses its output; ragged rows fail.
func csvRecords(t *testing.T, s *Summary) [][]string {
	t.Helper()
	var buf bytes.Buffer
	if err := CSV(&buf, s); err != nil {
		t.Fatal(err)
	}
	records, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatalf("parse CSV: %v", err)
	}
	return records
}

// TestJSONSchemaNewKinds: sweeps, capacity searches, interrupted runs and plain runs all
// validate against schema/result.json.
func TestJSONSchemaNewKinds(t *testing.T) {
	for name, s := range map[string]*Summary{
		"sweep": kindSweepSummary(), "capacity": capacitySummary(), "run": testSummary(), "interrupted": sweepSummary(),
	} {
		if err := validateResult(jsonDoc(t, s)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestJSONSchemaRejectsMistypedOptional(t *testing.T) {
	tests := []struct {
		name     string
		summary  func() *Summary
		edit     func(d map[string]any)
		wantPath string
	}{
		{"verdict not a string", testSummary, func(d map[string]any) { result(d, 0)["verdict"] = 1 }, "/results/0/verdict"},
		{"stuck keys fractional", testSummary, func(d map[string]any) { obj(result(d, 1), "safety")["stuck_keys"] = 0.5 },
			"/results/1/safety/stuck_keys"},
		{"event without what", testSummary, func(d map[string]any) {
			delete(result(d, 2)["events"].([]any)[0].(map[string]any), "what")
		}, "/results/2/events/0"},
		{"kind not a string", kindSweepSummary, func(d map[string]any) { d["kind"] = true }, "/kind"},
		{"kind unknown", kindSweepSummary, func(d map[string]any) { d["kind"] = "bench" }, "/kind"},
		{"sweep values not a list", kindSweepSummary, func(d map[string]any) { obj(d, "sweep")["values"] = "1s" }, "/sweep/values"},
		{"capacity step without pass", capacitySummary, func(d map[string]any) {
			delete(d["capacity"].([]any)[0].(map[string]any)["steps"].([]any)[2].(map[string]any), "pass")
		}, "/capacity/0/steps/2"},
		{"capacity step with the old name", capacitySummary, func(d map[string]any) {
			step := d["capacity"].([]any)[0].(map[string]any)["steps"].([]any)[2].(map[string]any)
			step["offered"] = step["offered_per_s"]
			delete(step, "offered_per_s")
		}, "/capacity/0/steps/2"},
		{"capacity entry not an object", capacitySummary, func(d map[string]any) { d["capacity"] = []any{"token"} },
			"/capacity/0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var doc map[string]any
			if err := json.Unmarshal(jsonDoc(t, tt.summary()), &doc); err != nil {
				t.Fatal(err)
			}
			tt.edit(doc)
			data, _ := json.Marshal(doc)
			err := validateResult(data)
			if err == nil || !strings.Contains(err.Error(), tt.wantPath) {
				t.Errorf("validate = %v, want a problem at %q", err, tt.wantPath)
			}
		})
	}
}

// TestJSONCapacityEmptySteps: a capacity search without steps writes [] rather than null.
func TestJSONCapacityEmptySteps(t *testing.T) {
	s := capacitySummary()
	s.Capacity[1].Steps = nil
	data := jsonDoc(t, s)
	if bytes.Contains(data, []byte("null")) {
		t.Errorf("JSON contains null")
	}
	if s.Capacity[1].Steps != nil {
		t.Errorf("JSON modified its input")
	}
}
