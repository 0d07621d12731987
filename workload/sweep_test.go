package workload

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/strategies"
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
	r := report.Result{OfferedRate: 1000, AcquireRate: 990, Acquired: 2970, DurationS: 3}
	r.LatencyUS.Acquire.P99 = 4000
	if s := slo.judge("ramp", r); !s.Pass {
		t.Errorf("a step within the SLO failed: %+v", s)
	}
	// A low rate is judged on whole arrivals: 15.6/s for 500ms is 7 arrivals surely (7.8
	// by the rate), and a step that took 7 achieved all it was offered (it read 89.6%).
	low := report.Result{OfferedRate: 15.6, AcquireRate: 14, Acquired: 7, DurationS: 0.5}
	if s := slo.judge("ramp", low); !s.Pass {
		t.Errorf("7 arrivals of 7 taken at 15.6/s for 500ms failed: %s", s.Reason)
	}
	low.Acquired, low.AcquireRate = 6, 12
	if s := slo.judge("ramp", low); s.Pass || !strings.Contains(s.Reason, "achieved 6 of 7 arrivals") {
		t.Errorf("6 of 7 arrivals: pass %v, %q; want a failure naming them", s.Pass, s.Reason)
	}
	r.AcquireRate, r.Acquired = 950, 2850
	r.LatencyUS.Acquire.P99 = 7100
	r.Timeouts = 30
	s := slo.judge("ramp", r)
	for _, want := range []string{"achieved 2850 of 3000 arrivals (95.0%)", "p99 7.1ms > 5ms", "timeouts 1.04% > 0.1%"} {
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
	if phases[1].Strategy != "token" || phases[1].TTL != strategies.TTLOf(time.Second) || phases[1].Label != "ttl=1s" || phases[3].Strategy != "fenced" {
		t.Fatalf("phases out of order: %+v", phases)
	}
	if _, _, err := ParseSweep("color=red"); err == nil {
		t.Error("unknown sweep parameter accepted")
	}
	if _, _, err := ParseSweep("ttl=1s, 2s,1s"); err == nil || err.Error() != "invalid --param ttl=1s, 2s,1s: 1s is listed twice; each value is one phase" {
		t.Errorf("a value listed twice: %v", err)
	}
	if _, err := SweepPhases(&cfg, "ttl", []string{"-1s"}); err == nil {
		t.Error("a negative ttl was accepted")
	}
	// A value the strategy refuses is named as the user typed it: --param ttl=0s, not --ttl "0".
	if _, err := SweepPhases(&cfg, "ttl", []string{"1s", "0s"}); err == nil || !strings.Contains(err.Error(), `invalid --param "ttl=0s": token needs a ttl`) {
		t.Errorf("ttl=0s on token: %v; want it named as --param \"ttl=0s\"", err)
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
		{Warmup: 0, Base: Base{Load: Load{Rate: 100}}},
		{Base: Base{Load: Load{Workers: 7, Keys: 3}}, Warmup: 2 * time.Second, Strategies: []string{"fenced"}},
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

// A ttl sweep under holder-crash and a pause weighs both sides: the shortest ttl that
// stayed safe, unless the blocked-time objective rules it out; said plainly when none fits.
func TestRecommendWeighsCrashesAgainstPauses(t *testing.T) {
	res := func(v string, ttlMS int64, overlaps uint64, blockedMS int64) report.Result {
		r := report.Result{Strategy: "token", ParamValue: v, TTLMS: ttlMS, Verdict: "safe"}
		r.Safety.Overlaps = overlaps
		if overlaps > 0 {
			r.Verdict = "UNSAFE"
			r.Safety.LostLeases = overlaps
		}
		r.Safety.CrashedHolders = 5
		r.Safety.BlockedAfterCrash = &report.CrashBlocked{Recovered: 5, P50: blockedMS * 99 / 100, Max: blockedMS}
		return r
	}
	sweep := []report.Result{res("10s", 10000, 0, 10020), res("500ms", 500, 12, 510), res("2s", 2000, 0, 2010)}

	for _, tc := range []struct {
		name string
		o    SweepOptions
		in   []report.Result
		want []string
		not  []string
	}{
		{"the done-when: 500ms breaks, 10s blocks too long", SweepOptions{MaxBlocked: 5 * time.Second}, sweep,
			[]string{"ttl 2s, the shortest that stayed safe within --max-blocked 5s", "up to 2.01s",
				"safety decided it: shorter broke — 500ms: 12 overlaps, 12 lost leases",
				"the objective rules out longer — 10s blocked a key for 10.02s after a crash"}, nil},
		{"no objective: the shortest safe, and what longer would cost", SweepOptions{}, sweep,
			[]string{"ttl 2s, the shortest that stayed safe;", "10s would block a key for 10.02s"}, []string{"--max-blocked"}},
		{"an objective nothing safe meets", SweepOptions{MaxBlocked: time.Second}, sweep,
			[]string{"no swept ttl is both safe and within --max-blocked 1s", "unsafe — 500ms: 12 overlaps",
				"too long — 2s blocked a key for 2.01s after a crash; 10s blocked"}, []string{"the shortest that stayed safe"}},
		{"a stuck key counts with what the phase saw", SweepOptions{MaxBlocked: 5 * time.Second},
			[]report.Result{func() report.Result {
				r := res("2s", 2000, 0, 2010)
				r.Safety.BlockedAfterCrash.Stuck, r.Safety.BlockedAfterCrash.StuckFor = 1, 6000
				return r
			}(), res("3s", 3000, 0, 3010)},
			[]string{"ttl 3s", "2s blocked a key for 6s after a crash"}, nil},
		{"an objective without crashes cannot be judged", SweepOptions{MaxBlocked: 5 * time.Second},
			[]report.Result{func() report.Result {
				r := res("2s", 2000, 0, 0)
				r.Safety.CrashedHolders, r.Safety.BlockedAfterCrash = 0, nil
				return r
			}()},
			[]string{"no swept ttl is both safe and within --max-blocked 5s", "no crash measured at 2s (add --fault holder-crash:p=P)"}, nil},
	} {
		got := RecommendWith("ttl", tc.in, tc.o)
		if len(got) != 1 {
			t.Errorf("%s: %d lines %q, want 1", tc.name, len(got), got)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(got[0], w) {
				t.Errorf("%s: %q\n  lacks %q", tc.name, got[0], w)
			}
		}
		for _, n := range tc.not {
			if strings.Contains(got[0], n) {
				t.Errorf("%s: %q\n  has %q", tc.name, got[0], n)
			}
		}
	}

	// A watchdog sweep keeps its cost lines and adds the weighing, shortest interval first
	// and off last.
	wd := func(v string, ms int64, overlaps uint64, blockedMS int64) report.Result {
		r := res(v, 2000, overlaps, blockedMS)
		r.WatchdogMS = ms
		return r
	}
	got := RecommendWith("watchdog", []report.Result{wd("off", 0, 9, 2000), wd("1s", 1000, 0, 2000), wd("100ms", 100, 0, 2000)}, SweepOptions{MaxBlocked: 5 * time.Second})
	if len(got) != 4 || !strings.Contains(got[3], "watchdog 100ms, the shortest that stayed safe") {
		t.Errorf("watchdog sweep: %q", got)
	}
	if err := (SweepOptions{MaxBlocked: -time.Second}).Validate("ttl"); err == nil || !strings.Contains(err.Error(), "--max-blocked") {
		t.Errorf("a negative --max-blocked: %v", err)
	}
}
