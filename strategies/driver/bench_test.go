package driver_test

import (
	"context"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockbench/lockbench/strategies/driver"
)

// One round trip of the protocol, a ping and its pong through the null driver, one at a
// time: encode, write(2) to the pipe, the driver's read and reply, and lockbench's read of
// the reply into the waiting goroutine. ns/op is the round trip's mean (a busy machine's
// stalls pull it up; the median is reported beside it) and allocs/op what lockbench
// allocates for it.
func BenchmarkRoundTrip(b *testing.B) {
	s := build(b, testdriver(b)+" null", target(b)).(*driver.Strategy)
	var rtt []time.Duration
	b.ReportAllocs()
	for b.Loop() {
		t0 := time.Now()
		if err := s.Ping(); err != nil {
			b.Fatal(err)
		}
		rtt = append(rtt, time.Since(t0))
	}
	b.ReportMetric(float64(median(rtt).Nanoseconds())/1e3, "p50-µs")
}

// Many workers' cycles at once through one null driver, each on keys of its own: requests
// interleave on the pipes and replies come back to whichever call waits for them. ns/op is
// the inverse of the cycles' throughput.
func BenchmarkNullDriverParallel(b *testing.B) {
	s := build(b, testdriver(b)+" null", target(b))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var worker atomic.Int64
	b.ReportAllocs()
	b.SetParallelism(16)
	b.RunParallel(func(pb *testing.PB) {
		w := strconv.FormatInt(worker.Add(1), 10)
		keys := []string{"par-" + w + "-a", "par-" + w + "-b"}
		for i := 0; pb.Next(); i++ {
			l, err := s.Acquire(ctx, keys[i%2], "w"+w)
			if err != nil {
				b.Error(err)
				return
			}
			if err := l.Release(ctx); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

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
