package profiles

import (
	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/workload"
)

// CommandLine is a load command's flags as a profile applies under them: the command line's
// flags win, the profile fills the others, and the defaults whatever remains.
type CommandLine struct {
	// Config is the configuration the load settings' flags are bound to; Strategy and
	// Faults are --strategy's and --fault's values. Set writes them.
	Config   *workload.Config
	Strategy *string
	Faults   *[]string
	// Given reports whether the command line set the flag named name, and its value as the
	// flag prints it (cmdline.Given): taken before a profile sets any.
	Given func(name string) (string, bool)
	// Set sets a flag as the command line would (pflag's FlagSet.Set).
	Set func(name, value string) error
	// CheckFault parses a fault spec (faults.Parse), so that a profile's bad one is reported
	// at its line.
	CheckFault func(spec string) error
}

// given says whether the command line set the flag named name.
func (cl CommandLine) given(name string) bool {
	_, ok := cl.Given(name)
	return ok
}

// Merge checks the command line's settings, then applies the profile named name ("" for
// none) under it, and makes the run's configuration: its strategies, its faults and, when
// the profile lists phases and the command line names no strategy, the profile's phases
// (ownPhases true). p is the loaded profile, nil without one. Every error names the flag
// or the profile's line that wrote the value.
func Merge(name string, cl CommandLine) (cfg workload.Config, p *Profile, ownPhases bool, err error) {
	if err := workload.CheckGiven(cl.Config, cl.Given); err != nil {
		return cfg, nil, false, err
	}
	if _, err := strategies.List(*cl.Strategy); err != nil {
		return cfg, nil, false, err
	}
	if name != "" {
		if p, err = Load(name); err != nil {
			return cfg, nil, false, err
		}
		if err := p.applyTop(cl); err != nil {
			return cfg, nil, false, err
		}
	}
	cfg = *cl.Config
	if cfg.Strategies, err = strategies.List(*cl.Strategy); err != nil {
		return cfg, nil, false, err // a profile's strategy key, checked where applyTop set it
	}
	cfg.Faults = *cl.Faults
	if p != nil && len(p.Phases) > 0 && !cl.given("strategy") {
		if cfg.Phases, err = p.BuildPhases(&cfg, cl.given, cl.CheckFault); err != nil {
			return cfg, nil, false, err
		}
		ownPhases = true
	}
	return cfg, p, ownPhases, nil
}

// applyTop sets every flag the command line left alone from the profile's top level, each
// value checked where it is written, and adds the profile's faults unless the command line
// gave its own.
func (p *Profile) applyTop(cl CommandLine) error {
	for _, v := range p.Values {
		if cl.given(v.Key) {
			continue
		}
		if err := cl.Set(v.Key, v.Value); err != nil {
			return p.ErrorAt(v, err)
		}
		if err := workload.CheckSetting(v.Key, cl.Config); err != nil {
			return p.ErrorAt(v, err)
		}
		if v.Key == "strategy" {
			if _, err := strategies.List(v.Value); err != nil {
				return p.ErrorAt(v, err)
			}
		}
	}
	if !cl.given("fault") {
		specs, err := p.CheckFaults(p.Faults, cl.CheckFault)
		if err != nil {
			return err
		}
		*cl.Faults = append(*cl.Faults, specs...)
	}
	return nil
}
