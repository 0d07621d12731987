package report

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// withHoldErrors gives r the hold errors errs as the engine reports them: their percentiles
// and, when carry is set, their histogram.
func withHoldErrors(t *testing.T, r Result, errs []int64, carry bool) Result {
	t.Helper()
	h := recordAll(t, errs)
	p := PercentilesOf(h)
	r.HoldErrorUS = &p
	if carry {
		r.Histograms.HoldError = encoded(t, h)
	}
	return r
}

// drawHoldErrors are one process's hold errors: a few µs mostly, a tail of late wake-ups
// whose size differs per process.
func drawHoldErrors(rng *rand.Rand, n int, tailUS float64) []int64 {
	v := make([]int64, n)
	for i := range v {
		x := 2 + 3*rng.ExpFloat64()
		if rng.IntN(50) == 0 {
			x = tailUS * (1 + rng.Float64())
		}
		v[i] = int64(x)
	}
	return v
}

// report merge (and the --procs fleet's merge) keeps hold_error_us: merged exactly from
// the histograms the processes carry, as the latencies are.
func TestMergeHoldErrorsExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	errs := [][]int64{drawHoldErrors(rng, 4000, 80), drawHoldErrors(rng, 1500, 3000), drawHoldErrors(rng, 2500, 400)}
	var inputs []*Summary
	var all []int64
	for i, e := range errs {
		r := withHoldErrors(t, engineResult(t, newProcess(rng, 500, 300, 4), 10, i+1), e, true)
		inputs = append(inputs, viaJSON(t, nodeSummary(i+1, len(errs), r)))
		all = append(all, e...)
	}
	merged, err := Merge(inputs, MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r := merged.Results[0]
	want := recordAll(t, all)
	if r.HoldErrorUS == nil || *r.HoldErrorUS != PercentilesOf(want) {
		t.Fatalf("merged hold_error_us = %+v, want %+v (from every process's holds)", r.HoldErrorUS, PercentilesOf(want))
	}
	got, err := DecodeHistogram(r.Histograms.HoldError)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Equals(want) {
		t.Errorf("merged hold error histogram differs from the histogram of every process's holds")
	}
	for _, n := range merged.Notes {
		if strings.Contains(n, "hold error") {
			t.Errorf("exact merge noted %q", n)
		}
	}
	for _, n := range r.Notes {
		if strings.Contains(n, "hold error") {
			t.Errorf("exact merge noted %q", n)
		}
	}
	// Merged again (a merge of merges), it stays exact.
	again, err := Merge([]*Summary{viaJSON(t, merged)}, MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if *again.Results[0].HoldErrorUS != PercentilesOf(want) {
		t.Errorf("re-merged hold_error_us = %+v, want %+v", again.Results[0].HoldErrorUS, PercentilesOf(want))
	}
}

// An input without the histogram (an older lockbench) leaves only its percentiles: the
// merge says so, keeps the count and the mean exact, and each percentile an upper bound.
func TestMergeHoldErrorsWithoutHistogram(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	a, b := drawHoldErrors(rng, 3000, 80), drawHoldErrors(rng, 1000, 3000)
	ra := withHoldErrors(t, engineResult(t, newProcess(rng, 500, 300, 4), 10, 1), a, true)
	rb := withHoldErrors(t, engineResult(t, newProcess(rng, 500, 300, 4), 10, 2), b, false)
	merged, err := Merge([]*Summary{viaJSON(t, nodeSummary(1, 2, ra)), viaJSON(t, nodeSummary(2, 2, rb))}, MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r := merged.Results[0]
	pa, pb, exact := *ra.HoldErrorUS, *rb.HoldErrorUS, PercentilesOf(recordAll(t, append(append([]int64{}, a...), b...)))
	got := r.HoldErrorUS
	if got == nil {
		t.Fatal("hold_error_us dropped by the merge")
	}
	if got.Count != exact.Count || math.Abs(got.Mean-exact.Mean) > 1e-6*exact.Mean {
		t.Errorf("count %d mean %v, want %d, %v", got.Count, got.Mean, exact.Count, exact.Mean)
	}
	if got.P99 != max(pa.P99, pb.P99) || got.Max != max(pa.Max, pb.Max) || got.P50 != max(pa.P50, pb.P50) {
		t.Errorf("percentiles %+v, want the highest of %+v and %+v", *got, pa, pb)
	}
	if got.P99 < exact.P99 || got.P50 < exact.P50 {
		t.Errorf("percentiles %+v below the true %+v: not an upper bound", *got, exact)
	}
	if r.Histograms.HoldError != "" {
		t.Errorf("a histogram was made up from percentiles")
	}
	if !strings.Contains(strings.Join(r.Notes, "\n"), "hold error merged from the processes' percentiles") {
		t.Errorf("notes %q: want the bound's note", r.Notes)
	}
}

// Results without holds (--hold 0) merge to none.
func TestMergeHoldErrorsNone(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	merged, err := Merge([]*Summary{
		viaJSON(t, nodeSummary(1, 2, engineResult(t, newProcess(rng, 500, 300, 4), 10, 1))),
		viaJSON(t, nodeSummary(2, 2, engineResult(t, newProcess(rng, 500, 300, 4), 10, 2))),
	}, MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r := merged.Results[0]; r.HoldErrorUS != nil || r.Histograms.HoldError != "" {
		t.Errorf("hold_error_us %+v, histogram %q: want none", r.HoldErrorUS, r.Histograms.HoldError)
	}
}

// The fleet's scheduling latency is its worst process's: each process queues on its own
// scheduler, and one that queues is what bounds the fleet.
func TestMergeClientSchedulingLatency(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	var inputs []*Summary
	for i, s := range []struct{ p99, mean float64 }{{40, 6}, {2500, 300}, {90, 12}} {
		r := engineResult(t, newProcess(rng, 500, 300, 4), 10, i+1)
		r.Client = ClientCost{Measured: true, CPUUS: 1000, Cores: 1, SchedP99US: s.p99, SchedMeanUS: s.mean}
		inputs = append(inputs, viaJSON(t, nodeSummary(i+1, 3, r)))
	}
	merged, err := Merge(inputs, MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c := merged.Results[0].Client; c.SchedP99US != 2500 || c.SchedMeanUS != 300 {
		t.Errorf("client %+v: want the worst process's scheduling latency, p99 2500 µs, mean 300 µs", c)
	}
}
