package profiles

import (
	"errors"
	"fmt"
	"strings"

	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/workload"
)

// How a profile applies under a command line: the command line's flags win, the profile
// fills the others, and the defaults whatever remains. given says whether the command line
// set a flag; checkFault parses a fault spec (faults.Parse), so that a bad one is reported at
// its line.

// BuildPhases makes the profile's explicit phases on top of the run's resolved settings
// (cfg.Phase: each phase a copy of the run's), each with its own values set as a phase
// setting; a setting given on the command line beats a phase's own value too.
func (p *Profile) BuildPhases(cfg *workload.Config, given func(flag string) bool, checkFault func(string) error) ([]workload.Phase, error) {
	var out []workload.Phase
	for _, pp := range p.Phases {
		if _, err := strategies.Resolve(pp.Strategy); err != nil {
			return nil, p.ErrorAt(Value{Key: "strategy", Value: pp.Strategy, Line: pp.Line}, err)
		}
		ph := cfg.Phase(pp.Strategy)
		ph.Label = pp.Label
		for _, v := range pp.Values {
			if given(v.Key) {
				continue
			}
			st, ok := workload.LookupSetting(v.Key)
			if !ok {
				return nil, p.ErrorAt(v, fmt.Errorf("a phase cannot set %s", v.Key))
			}
			if err := st.SetPhase(&ph, v.Value); err != nil {
				return nil, p.ErrorAt(v, workload.BadSetting(v.Key, v.Value, err.Error()))
			}
		}
		if !given("fault") {
			specs, err := p.CheckFaults(pp.Faults, checkFault)
			if err != nil {
				return nil, err
			}
			ph.Faults = append(ph.Faults, specs...)
		}
		out = append(out, ph)
	}
	return out, nil
}

// CheckFaults checks the fault specs vs where they are written, so that a bad one is
// reported with its file and line, and returns them.
func (p *Profile) CheckFaults(vs []Value, checkFault func(string) error) ([]string, error) {
	out := make([]string, 0, len(vs))
	for _, v := range vs {
		if err := checkFault(v.Value); err != nil {
			return nil, p.ErrorAt(v, err)
		}
		out = append(out, v.Value)
	}
	return out, nil
}

// Place puts a check's error about a setting (a *workload.ConfigError) at the profile's line
// that set it, when the profile did (a phase's own value before the top level's) and the
// command line did not; other errors are returned as they are.
func (p *Profile) Place(err error, given func(flag string) bool) error {
	var ce *workload.ConfigError
	if p == nil || !errors.As(err, &ce) || given(ce.Field) {
		return err
	}
	var set []Value // the phases' values of the field, the erring phase's first
	for _, pp := range p.Phases {
		for _, v := range pp.Values {
			if v.Key != ce.Field {
				continue
			}
			if strings.Contains(ce.Reason, pp.Strategy) {
				set = append([]Value{v}, set...)
			} else {
				set = append(set, v)
			}
		}
	}
	if len(set) > 0 {
		return p.ErrorAt(set[0], err)
	}
	for _, v := range p.Values {
		if v.Key == ce.Field {
			return p.ErrorAt(v, err)
		}
	}
	return err
}
