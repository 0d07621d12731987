package workload

import (
	"context"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/redistest"
	"github.com/lockbench/lockbench/strategies"
)

// The once-a-second reports add up to the phase's result: what the live exports
// (--metrics-addr, --live) publish is what the report says, second by second.
func TestProgressSecondsAddUpToTheResult(t *testing.T) {
	t.Parallel()
	_, c := redistest.Server(t)
	cfg := shortConfig("token")
	cfg.Workers, cfg.Keys, cfg.Duration, cfg.Warmup = 8, 4, 2500*time.Millisecond, 1200*time.Millisecond
	cfg.TTL = strategies.TTLOf(300 * time.Millisecond)
	if err := cfg.Watchdog.Set("auto"); err != nil {
		t.Fatal(err)
	}
	if err := cfg.Hold.Set("150ms"); err != nil { // held past a renewal
		t.Fatal(err)
	}
	var measured []ProgressSecond
	var latencies int64
	warmups := 0
	o := Options{Progress: func(pr Progress) {
		if pr.Warmup {
			warmups++
			if pr.Second != (ProgressSecond{}) {
				t.Errorf("a warm-up report carries a measured second: %+v", pr.Second)
			}
			return
		}
		if pr.Second.Latency == nil {
			t.Fatal("a measured report without its latencies")
		}
		latencies += pr.Second.Latency.TotalCount()
		s := pr.Second
		s.Latency = nil // reused by the collector: only valid during the call
		measured = append(measured, s)
	}}
	results, err := Run(context.Background(), cfg, redisBackend(c), o)
	if err != nil {
		t.Fatal(err)
	}
	r := results[0]
	var sum ProgressSecond
	for _, s := range measured {
		sum.Duration += s.Duration
		sum.Acquired += s.Acquired
		sum.Timeouts += s.Timeouts
		sum.Errors += s.Errors
		sum.Overlaps += s.Overlaps
		sum.Renewals += s.Renewals
		if s.Acquired > 0 && (s.P50US <= 0 || s.P99US < s.P50US) {
			t.Errorf("a second's percentiles: p50 %d µs, p99 %d µs", s.P50US, s.P99US)
		}
	}
	if len(measured) < 2 || r.Acquired == 0 {
		t.Fatalf("%d measured reports, %d acquired", len(measured), r.Acquired)
	}
	if sum.Acquired != r.Acquired || uint64(latencies) != r.Acquired || sum.Timeouts != r.Timeouts || sum.Errors != r.Errors || sum.Overlaps != r.Safety.Overlaps {
		t.Errorf("the seconds sum to %d acquired (%d latencies), %d timeouts, %d errors, %d overlaps; the result has %d, %d, %d, %d",
			sum.Acquired, latencies, sum.Timeouts, sum.Errors, sum.Overlaps, r.Acquired, r.Timeouts, r.Errors, r.Safety.Overlaps)
	}
	if sum.Renewals == 0 || sum.Renewals > r.Renewals {
		t.Errorf("the seconds count %d renewals; the result %d (holds of 150ms, watchdog every 100ms)", sum.Renewals, r.Renewals)
	}
	if ratio := sum.Duration.Seconds() / r.DurationS; ratio < 0.9 || ratio > 1.1 {
		t.Errorf("the seconds cover %s of a %.2fs window", sum.Duration, r.DurationS)
	}
	if warmups == 0 {
		t.Error("no warm-up report in a 1.2 s warm-up")
	}
}
