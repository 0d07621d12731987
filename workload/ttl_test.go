package workload

import (
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/strategies"
)

// TestDefaultTTLMarked: a phase knows whether its ttl is the default (so that the Redisson
// family runs as Redisson's lock()) or was chosen: by the flag, a Config field, a phase. The
// ttl value carries it (strategies.TTL's zero value is nobody's choice).
func TestDefaultTTLMarked(t *testing.T) {
	ttl, _ := LookupSetting("ttl")
	validated := func(c Config) Phase {
		t.Helper()
		c.Strategies = []string{"redisson-lock"}
		if err := c.Validate(); err != nil {
			t.Fatal(err)
		}
		return c.Phases[0]
	}

	if ph := validated(Config{}); ph.TTL.Chosen() || ph.TTL.Duration() != strategies.DefaultTTL {
		t.Errorf("no ttl given: phase ttl %s, chosen %v; want the default, not chosen", ph.TTL, ph.TTL.Chosen())
	}
	if ph := validated(Config{Base: Base{Lock: Lock{TTL: strategies.TTLOf(strategies.DefaultTTL)}}}); !ph.TTL.Chosen() {
		t.Error("Config.TTL set to 10s: taken for the default, want chosen")
	}

	var c Config
	ttl.Fill(&c) // as the flag is bound
	if ph := validated(c); ph.TTL.Chosen() {
		t.Error("flag bound, not given: taken for chosen, want the default")
	}
	c = Config{}
	ttl.Fill(&c)
	if err := ttl.Value(&c).Set("10s"); err != nil {
		t.Fatal(err)
	}
	if ph := validated(c); !ph.TTL.Chosen() {
		t.Error("--ttl 10s given: taken for the default, want chosen")
	}

	ph := validated(Config{})
	if err := ttl.SetPhase(&ph, "2s"); err != nil || !ph.TTL.Chosen() {
		t.Errorf("a phase's ttl 2s (%v): taken for the default, want chosen", err)
	}
}

// TestTTLRowHasNoBoundOfItsOwn: the ttl row judges a value by strategies.CheckTTL, the
// check Settle makes of each phase's ttl, and by no bound of its own: one check, one
// message (strategies' TestTTLCheckedInOnePlace holds the rest of the module to it).
func TestTTLRowHasNoBoundOfItsOwn(t *testing.T) {
	s, _ := LookupSetting("ttl")
	var c Config
	v, ok := s.at(&c, nil).(value[strategies.TTL])
	if !ok || v.r.ok != nil || v.r.settled == nil {
		t.Fatalf("the ttl row: a value of TTL %v, bound of its own %v, strategies' check %v; want only strategies' check", ok, ok && v.r.ok != nil, ok && v.r.settled != nil)
	}
	for _, text := range []string{"-1s", "500us"} {
		ph := Phase{Strategy: "token"}
		err := s.SetPhase(&ph, text)
		c := Config{Base: Base{Lock: Lock{TTL: strategies.TTLOf(-time.Second)}}}
		if text == "500us" {
			c.TTL = strategies.TTLOf(500 * time.Microsecond)
		}
		given := s.Check(&c)
		c.Strategies = []string{"token"}
		validated := c.Validate()
		want := "want " + strategies.TTLWant
		if err == nil || err.Error() != want || given == nil || validated == nil || given.Error() != validated.Error() ||
			!strings.HasPrefix(given.Error(), "invalid --ttl ") || !strings.HasSuffix(given.Error(), ": "+want) {
			t.Errorf("ttl %s: as a phase's value %v, as given %v, as validated %v; want one message, %q", text, err, given, validated, want)
		}
	}
}
