package workload

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/report"
)

// Every value of a sweep passes what a run's value passes — its setting's bound, the
// memory estimate, a hold within the phase — and a bad one is named as --param NAME=VALUE;
// two spellings of one value are one phase listed twice.
func TestSweepValuesAreJudgedLikeARunsValues(t *testing.T) {
	cfg := Config{Strategies: []string{"token"}, Duration: 300 * time.Millisecond}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		param, values, want string
	}{
		{"ttl", "1s,1000ms", `invalid --param "ttl=1s,1000ms": 1s and 1000ms are one value, listed twice`},
		{"hold", "1ms,1000h", `invalid --param "hold=1000h": the hold outlasts the whole phase`},
		{"keys", "0", `invalid --param "keys=0": want at least 1`},
	}
	if AvailableMemory() > 0 {
		cases = append(cases,
			struct{ param, values, want string }{"keys", "1,10000000000", `invalid --param "keys=10000000000": the token phase would need about`},
			struct{ param, values, want string }{"workers", "10,2000000000", `invalid --param "workers=2000000000": the token phase would need about`})
	}
	for _, tc := range cases {
		_, err := SweepPhases(&cfg, tc.param, strings.Split(tc.values, ","))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("--param %s=%s: %v; want %q", tc.param, tc.values, err, tc.want)
		}
	}
	if err := (SweepOptions{MaxBlocked: 5 * time.Second}).Validate("keys"); err == nil || !strings.Contains(err.Error(), "--max-blocked 5s") {
		t.Errorf("--max-blocked in a keys sweep: %v", err)
	}
}

// A fenced lock's lost leases are what its fence is for: the row reads safe (fenced), and
// the recommendation says the same of it (it said "unsafe below it — 50ms: 79 lost leases").
func TestRecommendationAgreesWithTheVerdicts(t *testing.T) {
	res := func(strategy, v string, ttlMS int64, overlaps, lost uint64, fencing bool) report.Result {
		r := report.Result{Strategy: strategy, ParamValue: v, TTLMS: ttlMS}
		r.Safety = report.Safety{Overlaps: overlaps, LostLeases: lost, Fencing: fencing}
		if overlaps > 0 && fencing {
			r.Safety.StaleFences = overlaps
		}
		r.Verdict = report.Judge(r.Safety, 100)
		return r
	}
	got := Recommend("ttl", []report.Result{res("fenced", "50ms", 50, 12, 79, true), res("fenced", "1s", 1000, 0, 0, true)})
	if len(got) != 1 || !strings.Contains(got[0], "fenced: smallest safe ttl 50ms") || strings.Contains(got[0], "unsafe") ||
		!strings.Contains(got[0], "79 lost leases: safe (fenced)") {
		t.Errorf("fenced: %q; want 50ms, safe (fenced) as its row reads", got)
	}
	// Without a fence, a lost lease still rules a ttl out.
	got = Recommend("ttl", []report.Result{res("token", "50ms", 50, 0, 79, false), res("token", "1s", 1000, 0, 0, false)})
	if len(got) != 1 || !strings.Contains(got[0], "smallest safe ttl 1s") || !strings.Contains(got[0], "50ms: 79 lost leases") {
		t.Errorf("token: %q", got)
	}
}

// The settings a user can give out of all sense are refused by their rows (issue 30, 17).
func TestSettingBoundsRefuse(t *testing.T) {
	for _, tc := range []struct{ name, value, want string }{
		{"max-inflight", "0", "invalid --max-inflight 0: want at least 1"},
		{"reentry", "1000000", "invalid --reentry 1000000: want from 0 to 1000"},
		{"acquire-timeout", "1ns", "invalid --acquire-timeout 1ns: want a duration > 0 of at least 1ms"},
	} {
		s, _ := LookupSetting(tc.name)
		var c Config
		if err := s.Value(&c).Set(tc.value); err != nil {
			t.Fatalf("%s %s: %v", tc.name, tc.value, err)
		}
		if err := s.Check(&c); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("--%s %s: %v; want %q", tc.name, tc.value, err, tc.want)
		}
	}
	if err := new(OnLost).Set(""); err == nil {
		t.Error(`--on-lost "" accepted`)
	}
}

// A ramp that makes no search is refused, naming the flag; one rate alone, asked for, is a
// search of one step.
func TestRampBounds(t *testing.T) {
	for _, tc := range []struct {
		r    Ramp
		want string
	}{
		{Ramp{Start: 1e12, Factor: 2, StepDuration: time.Second}, "invalid --start 1e+12"},
		{Ramp{Start: 1000, Factor: 1e308, StepDuration: time.Second}, "invalid --factor 1e+308: want more than 1 and at most 10000"},
		{Ramp{Start: 1000, Factor: 1, StepDuration: time.Second}, "invalid --factor 1"},
		{Ramp{Start: 0, Factor: 2, StepDuration: time.Second}, "invalid --start 0"},
		{Ramp{Start: 1000, Factor: 2, StepDuration: 50 * time.Millisecond}, "invalid --step-duration 50ms"},
	} {
		if err := tc.r.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v; want %q", tc.r, err, tc.want)
		}
	}
	for _, r := range []Ramp{{Start: 40, Factor: 2, MaxRate: 40, StepDuration: time.Second}, {Start: 50, Factor: 100, StepDuration: time.Second}} {
		if err := r.Validate(); err != nil {
			t.Errorf("%+v: %v", r, err)
		}
	}
}

// The up-front estimate covers the start-up's time as well as its memory: workers times
// StartCPUPerWorker over the CPUs, said before the run from StartUpNoticeAfter on, and
// refused past MaxStartUp naming the setting and the most it allows. On numbers: no clock.
func TestStartUpEstimate(t *testing.T) {
	ph := func(workers int, rate float64) Phase {
		return Phase{Strategy: "token", Base: Base{Load: Load{Workers: workers, MaxInflight: workers, Rate: rate, Keys: 1}}}
	}
	million := ph(1000000, 0)
	if got, want := million.StartUpTime(2), 1000000*StartCPUPerWorker/2; got != want {
		t.Errorf("1,000,000 workers on 2 CPUs: %s; want %s", got, want)
	}
	if huge := ph(2000000000, 0); huge.StartUpTime(0) <= 0 {
		t.Errorf("2e9 workers, procs 0 taken as 1: %s", huge.StartUpTime(0))
	}

	if n := StartUpNotice([]Phase{ph(10, 0), ph(100, 0)}, 2); n != "" {
		t.Errorf("100 workers: %q; want no notice", n)
	}
	want := fmt.Sprintf("starting 1000000 workers takes about %s before the warm-up; the measured window starts after", (1000000 * StartCPUPerWorker / 2).Round(time.Second))
	if n := StartUpNotice([]Phase{ph(10, 0), million}, 2); n != want {
		t.Errorf("a phase of 1,000,000 workers: %q; want %q", n, want)
	}
	if n := StartUpNotice(nil, 2); n != "" {
		t.Errorf("no phase: %q", n)
	}
	most := int(int64(MaxStartUp) * 2 / int64(StartCPUPerWorker))
	if err := CheckStartUp([]Phase{million, ph(most, 0)}, 2); err != nil {
		t.Errorf("%d workers, at the bound on 2 CPUs: %v", most, err)
	}
	for _, tc := range []struct {
		ph   Phase
		flag string
	}{{ph(most+100, 0), "--workers"}, {ph(most+100, 100), "--max-inflight"}} {
		err := CheckStartUp([]Phase{ph(10, 0), tc.ph}, 2)
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.ExitCode() != 2 {
			t.Fatalf("%s %d: %v; want a ConfigError", tc.flag, most+100, err)
		}
		msg := err.Error()
		for _, w := range []string{fmt.Sprintf("invalid %s %d: ", tc.flag, most+100), "more than the 10m0s a start-up may take", fmt.Sprintf("want at most %d", most)} {
			if !strings.Contains(msg, w) {
				t.Errorf("%q does not say %q", msg, w)
			}
		}
		if strings.Contains(msg, "\n") {
			t.Errorf("not one line: %q", msg)
		}
	}
}
