package fleet

import (
	"bytes"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/workload"
)

// childSecond is a child's k-th measured second: acquired acquires, each of latencyUS.
func childSecond(phase int, acquired uint64, latencyUS int64) workload.Progress {
	h := hdrhistogram.New(1, 3_600_000_000, 3)
	for range acquired {
		_ = h.RecordValue(latencyUS)
	}
	return workload.Progress{Phase: phase, Strategy: "token", Elapsed: time.Second, Total: 2 * time.Second,
		AcquireRate: float64(acquired), Second: workload.ProgressSecond{Duration: time.Second, Acquired: acquired, Errors: 1, Latency: h}}
}

// The k-th seconds of every child make the fleet's k-th: counts add up, the latencies are
// merged as histograms (the fleet's p99 is the slow child's, not an average); a warm-up is
// reported once, from the first child; a second that not every child reported comes out
// at the end.
func TestProgressSumsTheChildrenSecondBySecond(t *testing.T) {
	var one, two bytes.Buffer
	w1, w2 := ProgressWriter(&one), ProgressWriter(&two)
	w1(workload.Progress{Phase: 0, Strategy: "token", Warmup: true, Elapsed: time.Second, Total: time.Second})
	w2(workload.Progress{Phase: 0, Strategy: "token", Warmup: true, Elapsed: time.Second, Total: time.Second})
	w1(childSecond(0, 100, 1000))
	w2(childSecond(0, 10, 50000))
	w1(childSecond(0, 7, 1000)) // child 1's second second; child 2 ends before its own

	var got []workload.Progress
	agg := newProgress(Segment{From: 2, To: 3, Procs: 2}, 5, func(pr workload.Progress) { got = append(got, pr) })
	agg.read(1, &one)
	agg.read(2, &two)
	if len(got) != 2 {
		t.Fatalf("%d reports before the flush, want the warm-up and the first second: %+v", len(got), got)
	}
	if w := got[0]; !w.Warmup || w.Phase != 2 || w.Phases != 5 {
		t.Errorf("warm-up %+v; want one, of phase 2 of 5 (the segment's first)", w)
	}
	s := got[1]
	if s.Warmup || s.Phase != 2 || s.Second.Acquired != 110 || s.Second.Errors != 2 || s.AcquireRate != 110 {
		t.Errorf("first second %+v; want 110 acquires and 2 errors of phase 2", s)
	}
	if s.Second.P99US < 49000 || s.P99US < 49000 {
		t.Errorf("p99 %d µs (second), %d µs (window); want the slow child's 50 ms", s.Second.P99US, s.P99US)
	}
	agg.flush()
	if len(got) != 3 || got[2].Second.Acquired != 7 {
		t.Fatalf("after the flush: %+v; want child 1's second second alone", got)
	}
}

// Children that met at the barrier ran together, however far apart their results are
// stamped: one slow to start (a busy machine) must not make the merge refuse a short step.
func TestChildrenStartedApartMergeAsOneRun(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	child := func(node string, start time.Time) *report.Summary {
		return &report.Summary{Tool: "lockbench", Kind: report.KindRun, StartedAt: start, Node: node,
			Results: []report.Result{{Strategy: "token", DurationS: 0.3, Acquired: 10}}}
	}
	ins := []*report.Summary{child("1/2", at.Add(3*time.Second)), child("2/2", at)}
	if _, err := report.Merge(ins, report.MergeOptions{}); err == nil {
		t.Fatal("the merge took results 3s apart for one run of 300ms: the test proves nothing")
	}
	sameStart(ins)
	merged, err := report.Merge(ins, report.MergeOptions{})
	if err != nil || !merged.StartedAt.Equal(at) {
		t.Fatalf("merged %v, %v; want one run started at %s", merged, err, at)
	}
}
