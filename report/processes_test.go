package report

import (
	"bytes"
	"encoding/csv"
	"math"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// proc is one process's result of a hot-key phase: its workers, what they acquired, and how
// their other attempts ended.
type proc struct {
	workers          int
	acquired         uint64
	timeouts, errors uint64
	err              string // the phase did not finish
}

// procResults are the results of the processes of one phase, as `report merge` reads them.
func procResults(ps ...proc) []*Summary {
	var ss []*Summary
	for i, p := range ps {
		per := make([]uint64, p.workers)
		for j := range p.acquired {
			per[j%uint64(p.workers)]++
		}
		r := Result{Strategy: "token", Wait: "pubsub", Verdict: "safe", Workers: p.workers, Keys: 1, DurationS: 6,
			Acquired: p.acquired, Timeouts: p.timeouts, Errors: p.errors, Error: p.err, Fairness: fairnessOf(per)}
		ss = append(ss, nodeSummary(i+1, len(ps), r))
	}
	return ss
}

// jainOf is Jain's index of xs, computed the textbook way.
func jainOf(xs ...float64) float64 {
	var sum, squares float64
	for _, x := range xs {
		sum += x
		squares += x * x
	}
	return sum * sum / (float64(len(xs)) * squares)
}

// TestMergeProcessFairness: every merge of two or more processes carries fairness across
// them — Jain's index over their acquires per worker, the extremes, and the processes that
// starved — and a merge of one process does not.
func TestMergeProcessFairness(t *testing.T) {
	tests := []struct {
		name  string
		procs []proc
		want  *ProcessFairness // Sum and SumSquares are not compared
	}{
		{"issue 20's pubsub fleet: three processes got (almost) nothing",
			[]proc{{workers: 25, timeouts: 400}, {workers: 25, timeouts: 380}, {workers: 25, acquired: 5042}, {workers: 25, acquired: 2, timeouts: 350}},
			&ProcessFairness{Count: 4, Jain: jainOf(0, 0, 5042.0/25, 2.0/25), MinAcquired: 0, MaxAcquired: 5042, Starved: 2}},
		{"even", []proc{{workers: 25, acquired: 1190}, {workers: 25, acquired: 1184}, {workers: 25, acquired: 1347}, {workers: 25, acquired: 1200}},
			&ProcessFairness{Count: 4, Jain: jainOf(1190, 1184, 1347, 1200), MinAcquired: 1184, MaxAcquired: 1347}},
		// A process with three times the workers gets three times the acquires: its share.
		{"uneven workers, even shares", []proc{{workers: 10, acquired: 100}, {workers: 30, acquired: 300}},
			&ProcessFairness{Count: 2, Jain: 1, MinAcquired: 100, MaxAcquired: 300}},
		// Waiting when the window closed, with an acquire timeout longer than the window.
		{"still waiting: starved", []proc{{workers: 5, acquired: 50}, {workers: 5}},
			&ProcessFairness{Count: 2, Jain: 0.5, MinAcquired: 0, MaxAcquired: 50, Starved: 1}},
		{"every attempt an error: failing, not starved", []proc{{workers: 5, acquired: 50}, {workers: 5, errors: 451}},
			&ProcessFairness{Count: 2, Jain: 0.5, MinAcquired: 0, MaxAcquired: 50}},
		{"errors and timeouts: it waited, starved", []proc{{workers: 5, acquired: 50}, {workers: 5, errors: 3, timeouts: 9}},
			&ProcessFairness{Count: 2, Jain: 0.5, MinAcquired: 0, MaxAcquired: 50, Starved: 1}},
		{"its phase did not finish: failing, not starved", []proc{{workers: 5, acquired: 50}, {workers: 5, timeouts: 2, err: "connection refused"}},
			&ProcessFairness{Count: 2, Jain: 0.5, MinAcquired: 0, MaxAcquired: 50}},
		{"nobody acquired: no data, not starvation", []proc{{workers: 5, timeouts: 9}, {workers: 5, timeouts: 9}},
			&ProcessFairness{Count: 2}},
		{"one process", []proc{{workers: 100, acquired: 5000}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			merged, err := Merge(procResults(tt.procs...), MergeOptions{})
			if err != nil {
				t.Fatal(err)
			}
			r := merged.Results[0]
			got := r.Fairness.Processes
			if tt.want == nil {
				if got != nil {
					t.Fatalf("fairness.processes = %+v, want none for one process", *got)
				}
				return
			}
			if got == nil {
				t.Fatal("fairness.processes missing from a merge of several processes")
			}
			if got.Count != tt.want.Count || got.MinAcquired != tt.want.MinAcquired || got.MaxAcquired != tt.want.MaxAcquired ||
				got.Starved != tt.want.Starved || math.Abs(got.Jain-tt.want.Jain) > 1e-9 {
				t.Errorf("fairness.processes = %+v\nwant %+v", *got, *tt.want)
			}
			noted := slices.ContainsFunc(r.Notes, func(n string) bool { return strings.Contains(n, "processes starved") })
			if noted != (tt.want.Starved > 0) {
				t.Errorf("notes %q: a note on starved processes is wanted exactly when one starved", r.Notes)
			}
			if err := validateResult(jsonDoc(t, merged)); err != nil {
				t.Errorf("the merged result fails the schema: %v", err)
			}
		})
	}
}

// TestStarvationStandsNextToLatency: a merged run in which processes starved does not read
// as healthy: the table's PROC JAIN cell beside TIMEOUTS says how many starved, and a note
// names it (issue 20, "nothing hidden behind a good p99"); CSV and Markdown carry it too.
func TestStarvationStandsNextToLatency(t *testing.T) {
	merged, err := Merge(procResults(proc{workers: 25, timeouts: 400}, proc{workers: 25, timeouts: 380},
		proc{workers: 25, acquired: 5042}, proc{workers: 25, acquired: 2, timeouts: 350}), MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := ResultsTable(&buf, merged); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	header := slices.IndexFunc(strings.Split(out, "\n"), func(l string) bool { return strings.HasPrefix(l, strategyHeader) })
	headerLine := strings.Split(out, "\n")[header]
	if cols := regexp.MustCompile(`\s{2,}`).Split(headerLine, -1); slices.Index(cols, procJainHeader) != slices.Index(cols, "TIMEOUTS")+1 {
		t.Errorf("header %q: want PROC JAIN right after TIMEOUTS", headerLine)
	}
	for _, want := range []string{
		"0.25, 2/4 starved !",
		"token: 2 of 4 processes starved: no acquire in the measured window while their workers waited (acquires per process: 0, 0, 5,042, 2)",
		procJainHeader + " fairness across processes",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}

	buf.Reset()
	if err := Markdown(&buf, merged); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "| 0.25, 2/4 starved ! |") {
		t.Errorf("markdown lacks the PROC JAIN cell:\n%s", buf.String())
	}

	buf.Reset()
	if err := CSV(&buf, merged); err != nil {
		t.Fatal(err)
	}
	records, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	header2 := records[0]
	wantTail := []string{"processes", "processes_jain", "processes_min_acquired", "processes_max_acquired", "processes_starved"}
	if !slices.Equal(header2[len(header2)-len(wantTail):], wantTail) {
		t.Errorf("CSV header ends %q, want %q", header2[len(header2)-len(wantTail):], wantTail)
	}
	if row := records[1]; row[len(row)-1] != "2" || row[len(row)-5] != "4" {
		t.Errorf("CSV row ends %q: want 4 processes, 2 starved", row[len(row)-5:])
	}

	// A run of one process keeps its table: no PROC JAIN column, empty CSV cells.
	buf.Reset()
	if err := ResultsTable(&buf, testSummary()); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), procJainHeader) {
		t.Errorf("a single-process table shows %s:\n%s", procJainHeader, buf.String())
	}
}

// TestMergeOfMergedKeepsProcesses: merging merged results (allowed: they carry histograms
// and no node) counts every process once, as one merge of them all does.
func TestMergeOfMergedKeepsProcesses(t *testing.T) {
	ss := procResults(proc{workers: 25, timeouts: 400}, proc{workers: 25, acquired: 900},
		proc{workers: 25, acquired: 1200}, proc{workers: 25, acquired: 1100})
	all, err := Merge(ss, MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	left, err := Merge(ss[:2], MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	right, err := Merge(ss[2:], MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	both, err := Merge([]*Summary{viaJSON(t, left), viaJSON(t, right)}, MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, want := both.Results[0].Fairness.Processes, all.Results[0].Fairness.Processes
	if got == nil || got.Count != 4 || got.Starved != 1 || got.MinAcquired != 0 || got.MaxAcquired != 1200 || math.Abs(got.Jain-want.Jain) > 1e-9 {
		t.Errorf("merge of merged: %+v\nwant %+v", got, want)
	}
}
