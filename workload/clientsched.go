package workload

import (
	"math"
	"runtime/metrics"
	"slices"
)

// schedLatencies is the Go runtime's histogram of how long this process's goroutines waited
// runnable before they ran (runtime/metrics "/sched/latencies:seconds"): the client's run
// queue. CPU time does not show it. With GOMAXPROCS=1 and 1,000 workers a capacity step
// failed its p99 with lockbench at 0.4 of its one core: workers whose replies had come
// waited their turn on the one processor, and the answer read "bound by latency" where
// lockbench's scheduler was the bound.
const schedLatencies = "/sched/latencies:seconds"

// schedReading is the runtime's cumulative histogram at one moment.
type schedReading struct {
	counts  []uint64
	buckets []float64 // boundaries in seconds, len(counts)+1; the first and last may be infinite
}

func readSched() schedReading {
	s := []metrics.Sample{{Name: schedLatencies}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindFloat64Histogram {
		return schedReading{}
	}
	h := s[0].Value.Float64Histogram()
	return schedReading{counts: slices.Clone(h.Counts), buckets: slices.Clone(h.Buckets)}
}

// schedWait is the window's scheduling latency, from two readings: its p99 and mean, in µs.
// The runtime samples a share of the goroutines' transitions, so the count is not every
// wait; the distribution is. A bucket stands for its upper boundary (the p99 is never
// under-stated), an unbounded one for its finite edge. ok is false when nothing was
// sampled or the readings do not match.
func schedWait(from, to schedReading) (p99, mean float64, ok bool) {
	if len(to.counts) == 0 || len(from.counts) != len(to.counts) {
		return 0, 0, false
	}
	delta := make([]uint64, len(to.counts))
	var total uint64
	for i := range delta {
		delta[i] = to.counts[i] - from.counts[i]
		total += delta[i]
	}
	if total == 0 {
		return 0, 0, false
	}
	upper := func(i int) float64 {
		if b := to.buckets[i+1]; !math.IsInf(b, 0) {
			return b
		}
		return max(to.buckets[i], 0)
	}
	mid := func(i int) float64 {
		lo, hi := to.buckets[i], to.buckets[i+1]
		switch {
		case math.IsInf(lo, 0):
			return max(hi, 0)
		case math.IsInf(hi, 0):
			return lo
		}
		return (lo + hi) / 2
	}
	rank := uint64(math.Ceil(0.99 * float64(total)))
	var seen uint64
	var sum float64
	p99 = -1
	for i, n := range delta {
		if n == 0 {
			continue
		}
		seen += n
		sum += float64(n) * mid(i)
		if p99 < 0 && seen >= rank {
			p99 = upper(i)
		}
	}
	return p99 * 1e6, sum / float64(total) * 1e6, true
}
