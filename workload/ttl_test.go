package workload

import (
	"testing"

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
