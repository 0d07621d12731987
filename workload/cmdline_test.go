package workload

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/usage"
)

// givenFlags is a command line that set the flags of values (name → value as printed).
func givenFlags(values map[string]string) func(string) (string, bool) {
	return func(name string) (string, bool) {
		v, ok := values[name]
		return v, ok
	}
}

// The settings the command line gave are checked by their rows; the others are not (a
// profile may still set them).
func TestCheckGivenChecksOnlyWhatWasGiven(t *testing.T) {
	c := Config{}
	c.Workers = -1
	if err := CheckGiven(&c, givenFlags(nil)); err != nil {
		t.Errorf("nothing given: %v; want no check", err)
	}
	err := CheckGiven(&c, givenFlags(map[string]string{"workers": "-1"}))
	if err == nil || !usage.Is(err) || !strings.HasPrefix(err.Error(), "invalid --workers -1: ") {
		t.Errorf("--workers -1 given: %v; want a usage error naming --workers -1", err)
	}
	if err := CheckSetting("workers", &c); err == nil {
		t.Error("CheckSetting(workers) of -1: no error")
	}
	if err := CheckSetting("strategy", &c); err != nil {
		t.Errorf("CheckSetting of a name that is no load setting: %v", err)
	}
}

// capacity's ramp sets each step's rate and measured time: --rate and --duration given are
// refused, in these words; the step's time becomes the run's duration, and the warm-up is
// capacity's own unless given.
func TestRampSettle(t *testing.T) {
	for _, tc := range []struct {
		given map[string]string
		want  string
	}{
		{map[string]string{"rate": "100"}, "invalid --rate 100: capacity offers its own rates, from --start multiplied by --factor each step; drop --rate"},
		{map[string]string{"duration": "2s"}, "invalid --duration 2s: capacity measures each step for --step-duration; use that instead"},
	} {
		r := Ramp{Start: 1000, Factor: 2, StepDuration: time.Second}
		err := r.Settle(&Config{}, givenFlags(tc.given))
		if err == nil || err.Error() != tc.want || !usage.Is(err) {
			t.Errorf("%v: %v; want the usage error %q", tc.given, err, tc.want)
		}
	}
	r := Ramp{Start: 1000, Factor: 1, StepDuration: time.Second}
	if err := r.Settle(&Config{}, givenFlags(nil)); err == nil {
		t.Error("--factor 1: no error; the ramp is checked")
	}
	r = Ramp{Start: 1000, Factor: 2, StepDuration: 700 * time.Millisecond}
	var c Config
	if err := r.Settle(&c, givenFlags(nil)); err != nil {
		t.Fatal(err)
	}
	if c.Duration != 700*time.Millisecond || c.Warmup != CapacityWarmup {
		t.Errorf("duration %s, warm-up %s; want the step's 700ms and %s", c.Duration, c.Warmup, CapacityWarmup)
	}
	c = Config{Warmup: time.Second}
	if err := r.Settle(&c, givenFlags(map[string]string{"warmup": "1s"})); err != nil || c.Warmup != time.Second {
		t.Errorf("--warmup 1s given: warm-up %s, %v; want 1s kept", c.Warmup, err)
	}
}

// A sweep's parameter given as its own flag is refused: the sweep would override it.
func TestCheckSweepGiven(t *testing.T) {
	err := CheckSweepGiven("ttl", "ttl=1s,2s", givenFlags(map[string]string{"ttl": "5s"}))
	want := "invalid --ttl 5s: --param ttl=1s,2s sets the ttl of each phase; give one or the other"
	if err == nil || err.Error() != want || !usage.Is(err) {
		t.Errorf("--ttl 5s with --param ttl=1s,2s: %v; want the usage error %q", err, want)
	}
	if err := CheckSweepGiven("ttl", "ttl=1s,2s", givenFlags(map[string]string{"keys": "5"})); err != nil {
		t.Errorf("--keys with --param ttl: %v; want no error", err)
	}
}

// A strategy listed twice in a row is swept once.
func TestConfigSweepListsAStrategyOnce(t *testing.T) {
	c := Config{Strategies: []string{"token", "token", "fenced"}}
	c.Duration = time.Second
	if err := c.Sweep("keys", []string{"1", "10"}); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ph := range c.Phases {
		got = append(got, ph.Strategy)
	}
	if want := []string{"token", "token", "fenced", "fenced"}; !slices.Equal(got, want) {
		t.Errorf("phases' strategies %v, want %v", got, want)
	}
}

// --param may be given once; the second is refused in these words.
func TestSweepParamGivenOnce(t *testing.T) {
	var p SweepParam
	if err := p.Set("ttl=1s"); err != nil || p.String() != "ttl=1s" {
		t.Fatalf("first --param: %q, %v", p.String(), err)
	}
	err := p.Set("ttl=2s")
	want := "given twice (ttl=1s, then ttl=2s): a sweep varies one parameter; run one sweep per parameter"
	if err == nil || err.Error() != want || p.Spec != "ttl=1s" {
		t.Errorf("second --param: %v, kept %q; want %q and the first kept", err, p.Spec, want)
	}
}
