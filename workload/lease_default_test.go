package workload

import (
	"testing"

	"github.com/lockbench/lockbench/strategies"
)

// TestDefaultTTLMarked: a phase knows whether its ttl is the default (so that the Redisson
// family runs as Redisson's lock()) or was chosen: by the flag, a Config field, a phase.
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

	if ph := validated(Config{}); !ph.ttlDefault || ph.TTL != strategies.DefaultTTL {
		t.Errorf("no ttl given: phase ttl %s, default %v; want the default, marked", ph.TTL, ph.ttlDefault)
	}
	if ph := validated(Config{TTL: strategies.DefaultTTL}); ph.ttlDefault {
		t.Error("Config.TTL set to 10s: marked as the default, want chosen")
	}

	var c Config
	ttl.Fill(&c) // as the flag is bound
	if ph := validated(c); !ph.ttlDefault {
		t.Error("flag bound, not given: not marked as the default")
	}
	c = Config{}
	ttl.Fill(&c)
	if err := ttl.Value(&c).Set("10s"); err != nil {
		t.Fatal(err)
	}
	if ph := validated(c); ph.ttlDefault {
		t.Error("--ttl 10s given: marked as the default, want chosen")
	}

	ph := validated(Config{})
	if err := ttl.SetPhase(&ph, "2s"); err != nil || ph.ttlDefault {
		t.Errorf("a phase's ttl 2s (%v): marked as the default, want chosen", err)
	}
}
