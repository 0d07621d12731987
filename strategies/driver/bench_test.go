package driver_test

import (
	"context"
	"slices"
	"testing"
	"time"
)

// The protocol's own cost per lock cycle: an acquire and a release of an uncontended key
// through the null driver (no Redis behind it), one goroutine at a time — two round trips
// through the pipes and the driver, and what lockbench allocates for them. Besides the
// mean (ns/op, which a busy machine's stalls pull up), it reports the median acquire and
// release, as the run's report reads them.
func BenchmarkNullDriverCycle(b *testing.B) {
	s := build(b, testdriver(b)+" null", target(b))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var acq, rel []time.Duration
	b.ReportAllocs()
	for b.Loop() {
		t0 := time.Now()
		l, err := s.Acquire(ctx, "bench", "w")
		if err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if err := l.Release(ctx); err != nil {
			b.Fatal(err)
		}
		acq, rel = append(acq, t1.Sub(t0)), append(rel, time.Since(t1))
	}
	b.ReportMetric(float64(median(acq).Nanoseconds())/1e3, "acquire-p50-µs")
	b.ReportMetric(float64(median(rel).Nanoseconds())/1e3, "release-p50-µs")
}

func median(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	slices.Sort(d)
	return d[len(d)/2]
}
