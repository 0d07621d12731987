package loadcheck

import (
	"runtime"
	"strings"

	"github.com/lockbench/lockbench/internal/usage"
	"github.com/lockbench/lockbench/services"
	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/workload"
)

// Load is what the joint checks read of a load command's flags, once a profile has been
// applied.
type Load struct {
	Command  string // run, sweep or capacity
	Strategy string // --strategy as given, or as the profile set it
	// ProfilePhases: the run's phases are a profile's own, each naming its strategy.
	ProfilePhases bool
	Services      *services.Bound // the lock services' flags
}

// Joint checks what the settings' bounds cannot, in this order: a --strategy that names
// none, a run's list of strategies, --max-inflight against the rate (capacity's ramp sets a
// rate per step), the services' flags, the lock options each phase's strategy takes, and
// the counts this machine cannot hold (workload.CheckMemory declares what a worker and a
// key cost) or would take minutes to start (workload.CheckStartUp).
func Joint(cfg *workload.Config, l Load) error {
	if strings.TrimSpace(l.Strategy) == "" {
		return usage.Errorf("invalid --strategy %q: name at least one strategy (see 'lockbench strategies'), or all", l.Strategy)
	}
	if l.Command == "run" {
		if err := services.CheckList("strategy", l.Strategy, false); err != nil {
			return err
		}
	}
	if err := cfg.CheckMaxInflight(l.Command == "capacity"); err != nil {
		return err
	}
	if err := l.Services.Check(); err != nil {
		return err
	}
	// 'all' names no strategy itself: a strategy of it that waits its own way (spin-lock)
	// ignores --wait rather than refusing the run.
	if err := workload.CheckApplies(cfg.Phases, l.Strategy == strategies.All && !l.ProfilePhases); err != nil {
		return err
	}
	if err := workload.CheckMemory(cfg.Phases, workload.AvailableMemory()); err != nil {
		return err
	}
	return workload.CheckStartUp(cfg.Phases, runtime.GOMAXPROCS(0))
}
