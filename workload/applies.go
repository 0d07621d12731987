package workload

import (
	"slices"
	"strconv"
	"strings"

	"github.com/lockbench/lockbench/internal/usage"
	"github.com/lockbench/lockbench/strategies"
)

// CheckApplies refuses a lock parameter set for a strategy that does not use it (a library
// or another lock service that waits or renews its own way, strategies.Info.Applies): the
// header would name a setting the run never had. waitForAll says --wait came with
// --strategy all, whose strategies that wait their own way ignore it rather than refuse it.
func CheckApplies(phases []Phase, waitForAll bool) error {
	for _, ph := range phases {
		info, ok := strategies.Lookup(ph.Strategy)
		if !ok || info.Applies == nil {
			continue
		}
		for _, o := range []struct {
			name, value string
			set         bool
		}{
			{"wait", ph.Wait.String(), ph.Wait != (strategies.Wait{}) && !waitForAll},
			{"watchdog", ph.Watchdog.String(), ph.Watchdog.Enabled()},
			{"wait-replicas", strconv.Itoa(ph.WaitReplicas), ph.WaitReplicas > 0},
		} {
			if !o.set || slices.Contains(info.Applies, o.name) {
				continue
			}
			why := ph.Strategy + " does it its own way"
			if o.name == "wait-replicas" {
				why = ph.Strategy + " has no replica check to make"
				if info.Service != "" {
					why = "it WAITs for Redis replicas, and " + ph.Strategy + " runs on " + info.Service + ", whose writes a quorum commits"
				}
			}
			return usage.Errorf("invalid --%s %s for %s: it does not apply (%s); %s honours: %s. Run it in a phase or run of its own",
				o.name, o.value, ph.Strategy, why, ph.Strategy, strings.Join(info.Applies, ", "))
		}
	}
	return nil
}
