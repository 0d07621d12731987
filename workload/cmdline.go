package workload

import (
	"fmt"
	"slices"
	"time"

	"github.com/lockbench/lockbench/internal/usage"
)

// Rules between a load command's flags and the settings: what the command line may give,
// and what a command sets itself. given reports whether the command line set the flag
// named name and, if it did, its value as the flag prints it (cmdline.Given).

// CheckGiven checks every load setting the command line gave (given) by its row's bound,
// before a profile adds its own, so that an error names the flag.
func CheckGiven(c *Config, given func(name string) (string, bool)) error {
	for _, s := range Settings {
		if _, ok := given(s.Name); ok {
			if err := s.Check(c); err != nil {
				return err
			}
		}
	}
	return nil
}

// CheckSetting checks the load setting named name (a flag name) of c by its row's bound;
// nil for a name that is no load setting.
func CheckSetting(name string, c *Config) error {
	if s, ok := LookupSetting(name); ok {
		return s.Check(c)
	}
	return nil
}

// CapacityWarmup is capacity's warm-up before each step when --warmup is not given.
const CapacityWarmup = 500 * time.Millisecond

// Settle makes c a capacity search's run: the ramp sets each step's rate and measured time,
// so --rate and --duration on the command line are refused (the run's own would be
// ignored); the ramp is checked; each phase measures for a step (the report's header says
// so) after the capacity warm-up, unless --warmup is given.
func (r *Ramp) Settle(c *Config, given func(name string) (string, bool)) error {
	if v, ok := given("rate"); ok {
		return usage.Errorf("invalid --rate %s: capacity offers its own rates, from --start multiplied by --factor each step; drop --rate", v)
	}
	if v, ok := given("duration"); ok {
		return usage.Errorf("invalid --duration %s: capacity measures each step for --step-duration; use that instead", v)
	}
	if err := r.Validate(); err != nil {
		return err
	}
	c.Duration = r.StepDuration
	if _, ok := given("warmup"); !ok {
		c.Warmup = CapacityWarmup
	}
	return nil
}

// CheckSweepGiven refuses the flag of the parameter a sweep varies (name, from --param
// spec) on the command line: the sweep sets it in every phase, so the flag would be
// silently overridden.
func CheckSweepGiven(name, spec string, given func(name string) (string, bool)) error {
	if v, ok := given(name); ok {
		return usage.Errorf("invalid --%s %s: --param %s sets the %s of each phase; give one or the other", name, v, spec, name)
	}
	return nil
}

// Sweep makes c's phases a sweep's: one per value of param for each strategy, a strategy
// listed twice (a profile may) swept once.
func (c *Config) Sweep(param string, values []string) (err error) {
	c.Strategies = slices.Compact(slices.Clone(c.Strategies))
	c.Phases, err = SweepPhases(c, param, values)
	return err
}

// SweepParam is --param, a flag that may be given once: a sweep varies one parameter, and
// a second --param would silently replace the first. Spec is its value, NAME=V1,V2,...
type SweepParam struct {
	Spec string
	set  bool
}

func (p *SweepParam) String() string { return p.Spec }
func (p *SweepParam) Type() string   { return "string" }

// Set takes the flag's value, once.
func (p *SweepParam) Set(v string) error {
	if p.set {
		return fmt.Errorf("given twice (%s, then %s): a sweep varies one parameter; run one sweep per parameter", p.Spec, v)
	}
	p.Spec, p.set = v, true
	return nil
}
