package workload

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/report"
)

func TestSearchFindsTheKnee(t *testing.T) {
	for _, tc := range []struct {
		capacity float64
		ramp     Ramp
		wantMin  float64 // the answer must be within 5% below the true capacity
	}{
		{5500, Ramp{Start: 1000, Factor: 2, Bisections: 5, MaxRate: 1e7, MinRate: 10}, 5500 / 1.05},
		{120, Ramp{Start: 1000, Factor: 2, Bisections: 6, MaxRate: 1e7, MinRate: 10}, 120 / 1.05},
		{1e9, Ramp{Start: 1000, Factor: 10, Bisections: 5, MaxRate: 1e6, MinRate: 10}, 1e6},
	} {
		var steps []float64
		var best float64
		err := search(tc.ramp, func(stage string, rate float64) (bool, error) {
			steps = append(steps, rate)
			ok := rate <= tc.capacity
			if ok && rate > best {
				best = rate
			}
			return ok, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if best > tc.capacity || best < tc.wantMin {
			t.Errorf("capacity %.0f: answer %.0f after steps %v", tc.capacity, best, steps)
		}
		if len(steps) > 20 {
			t.Errorf("capacity %.0f: %d steps", tc.capacity, len(steps))
		}
	}
}

func TestParseSLO(t *testing.T) {
	for in, want := range map[string]SLO{
		"p99=5ms":               {P99: 5 * time.Millisecond, TimeoutRate: 0.001},
		"p99=250us,timeouts=1%": {P99: 250 * time.Microsecond, TimeoutRate: 0.01},
		"timeouts=0%,p99=1s":    {P99: time.Second, TimeoutRate: 0},
	} {
		got, err := ParseSLO(in)
		if err != nil || got != want {
			t.Errorf("ParseSLO(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "p99", "p99=fast", "timeouts=1%", "p50=1ms", "p99=1ms,timeouts=200%"} {
		if _, err := ParseSLO(bad); err == nil || !strings.Contains(err.Error(), "--slo") {
			t.Errorf("ParseSLO(%q): want an error naming --slo, got %v", bad, err)
		}
	}
}

func TestJudge(t *testing.T) {
	slo := SLO{P99: 5 * time.Millisecond, TimeoutRate: 0.001}
	r := report.Result{OfferedRate: 1000, AcquireRate: 990, Acquired: 2970}
	r.LatencyUS.Acquire.P99 = 4000
	if s := slo.judge("ramp", r); !s.Pass {
		t.Errorf("a step within the SLO failed: %+v", s)
	}
	r.AcquireRate = 950
	r.LatencyUS.Acquire.P99 = 7100
	r.Timeouts = 30
	s := slo.judge("ramp", r)
	for _, want := range []string{"achieved 95.0% of offered", "p99 7.1ms > 5ms", "timeouts 1.00% > 0.1%"} {
		if s.Pass || !strings.Contains(s.Reason, want) {
			t.Errorf("reason %q lacks %q", s.Reason, want)
		}
	}
}

func TestSweepPhasesAndRecommendations(t *testing.T) {
	cfg := Config{Strategies: []string{"token", "fenced"}}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	param, values, err := ParseSweep("ttl=200ms,1s,5s")
	if err != nil {
		t.Fatal(err)
	}
	phases, err := SweepPhases(&cfg, param, values)
	if err != nil || len(phases) != 6 {
		t.Fatalf("%d phases, %v", len(phases), err)
	}
	if phases[1].Strategy != "token" || phases[1].TTL != time.Second || phases[1].Label != "ttl=1s" || phases[3].Strategy != "fenced" {
		t.Fatalf("phases out of order: %+v", phases)
	}
	if _, _, err := ParseSweep("color=red"); err == nil {
		t.Error("unknown sweep parameter accepted")
	}
	if _, err := SweepPhases(&cfg, "ttl", []string{"-1s"}); err == nil {
		t.Error("a negative ttl was accepted")
	}

	res := func(v string, ttlMS int64, overlaps uint64) report.Result {
		r := report.Result{Strategy: "token", ParamValue: v, TTLMS: ttlMS, Verdict: "safe"}
		r.Safety.Overlaps = overlaps
		if overlaps > 0 {
			r.Verdict = "UNSAFE"
		}
		return r
	}
	got := Recommend("ttl", []report.Result{res("5s", 5000, 0), res("200ms", 200, 40), res("1s", 1000, 0)})
	if len(got) != 1 || !strings.Contains(got[0], "smallest safe ttl 1s") || !strings.Contains(got[0], "200ms: 40 overlaps") {
		t.Errorf("ttl recommendation: %q", got)
	}
	got = Recommend("ttl", []report.Result{res("200ms", 200, 40)})
	if !strings.Contains(got[0], "no swept ttl was safe") {
		t.Errorf("ttl recommendation when none is safe: %q", got)
	}

	w := func(v string, renewals uint64, overlaps uint64) report.Result {
		r := res(v, 500, overlaps)
		r.Renewals, r.DurationS, r.AcquireRate = renewals, 10, 100
		r.LatencyUS.Hold.Mean = 400_000 // 100/s x 0.4s = 40 locks held on average
		r.Redis = report.RedisCost{Measured: true, Commands: 12000, CPUPercent: 20}
		return r
	}
	got = Recommend("watchdog", []report.Result{w("off", 0, 7), w("100ms", 4000, 0)})
	if len(got) != 2 || !strings.Contains(got[0], "UNSAFE") || !strings.Contains(got[1], "30.00 renewal commands/s per held lock") || !strings.Contains(got[1], "100.0% of Redis commands") {
		t.Errorf("watchdog recommendations: %q", got)
	}
	if math.IsNaN(heldLocks(w("x", 1, 0))) {
		t.Error("heldLocks NaN")
	}
}

// Validate runs again inside Run: it must not change a validated configuration.
func TestValidateIsIdempotent(t *testing.T) {
	for _, cfg := range []Config{
		{Warmup: -1, Strategies: []string{"token", "fair"}},
		{Warmup: 0, Rate: 100},
		{Workers: 7, Keys: 3, Warmup: 2 * time.Second, Strategies: []string{"fenced"}},
	} {
		if err := cfg.Validate(); err != nil {
			t.Fatal(err)
		}
		once := fmt.Sprintf("%+v", cfg)
		if err := cfg.Validate(); err != nil {
			t.Fatal(err)
		}
		if twice := fmt.Sprintf("%+v", cfg); twice != once {
			t.Errorf("a second Validate changed the configuration:\n%s\n%s", once, twice)
		}
	}
}
