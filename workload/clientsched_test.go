package workload

import (
	"math"
	"testing"
	"time"
)

// schedWait reads the window's scheduling latency from two cumulative readings: the p99 at
// its bucket's upper boundary (never under-stated), the mean at the buckets' midpoints.
func TestSchedWait(t *testing.T) {
	inf := math.Inf(1)
	buckets := []float64{math.Inf(-1), 0, 1e-6, 1e-5, 1e-4, inf}
	from := schedReading{counts: []uint64{0, 10, 10, 0, 0}, buckets: buckets}
	to := schedReading{counts: []uint64{0, 60, 59, 1, 0}, buckets: buckets} // 50, 49, 1 in the window
	p99, mean, ok := schedWait(from, to)
	wantMean := (50*0.5e-6 + 49*5.5e-6 + 1*55e-6) / 100 * 1e6
	if !ok || math.Abs(p99-10) > 1e-9 || math.Abs(mean-wantMean) > 1e-9 {
		t.Errorf("p99 %v µs, mean %v µs, ok %v; want 10 µs (the 99th wait's bucket, up to 10µs), %v µs, true", p99, mean, ok, wantMean)
	}
	// The 99th of 100 in the unbounded bucket: its finite edge.
	to.counts = []uint64{0, 10, 10, 0, 100}
	if p99, _, ok := schedWait(from, to); !ok || math.Abs(p99-100) > 1e-9 {
		t.Errorf("p99 %v µs, ok %v; want 100 µs, the unbounded bucket's edge", p99, ok)
	}
	if _, _, ok := schedWait(from, from); ok {
		t.Error("a window without a sampled wait reads as measured")
	}
	if _, _, ok := schedWait(schedReading{}, to); ok {
		t.Error("readings of different shapes read as measured")
	}
}

// The runtime has the metric: a real reading has buckets and, once goroutines have run,
// counts.
func TestReadSched(t *testing.T) {
	r := readSched()
	if len(r.counts) == 0 || len(r.buckets) != len(r.counts)+1 {
		t.Fatalf("reading of %s: %d counts, %d buckets", schedLatencies, len(r.counts), len(r.buckets))
	}
}

// The start-delay probe's p99 is its 99th latest wake-up of 100, to the histogram's two
// digits; none read is not measured; a running probe stops when finished.
func TestLateProbeP99(t *testing.T) {
	startLateProbe().finish() // returns: the probe's goroutine ended
	p := newLateProbe()
	if _, ok := p.p99(); ok {
		t.Error("a probe without a wake-up reads as measured")
	}
	for range 98 {
		p.add(100 * time.Microsecond)
	}
	p.add(3 * time.Millisecond)
	p.add(50 * time.Millisecond)
	if p99, ok := p.p99(); !ok || p99 < 2970 || p99 > 3030 {
		t.Errorf("p99 %vµs, ok %v; want 3ms, the 99th of 100", p99, ok)
	}
}
