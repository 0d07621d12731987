package faults

import "slices"

// Plan is the fault specs of every phase of a run, parsed once when the run is resolved;
// the rest of lockbench asks the plan instead of parsing the specs again.
type Plan struct {
	parsed map[string]Spec // by the spec as written
	phases [][]Spec
}

// NewPlan parses each phase's fault specs; phases[i] are phase i's specs as written. The
// first malformed one is a *SpecError.
func NewPlan(phases [][]string) (*Plan, error) {
	p := &Plan{parsed: map[string]Spec{}}
	for _, raws := range phases {
		specs, err := ParseAll(raws)
		if err != nil {
			return nil, err
		}
		for _, s := range specs {
			p.parsed[s.Raw] = s
		}
		p.phases = append(p.phases, specs)
	}
	return p, nil
}

// Phase returns phase i's specs.
func (p *Plan) Phase(i int) []Spec { return p.phases[i] }

// Specs returns the specs written as raws, which must be among the plan's (a phase's
// Faults); an unknown one is parsed, so that a caller never gets less than it asked for.
func (p *Plan) Specs(raws []string) ([]Spec, error) {
	out := make([]Spec, 0, len(raws))
	for _, r := range raws {
		s, ok := p.parsed[r]
		if !ok {
			var err error
			if s, err = Parse(r); err != nil {
				return nil, err
			}
		}
		out = append(out, s)
	}
	return out, nil
}

// Any reports whether a spec of any phase satisfies pred.
func (p *Plan) Any(pred func(Spec) bool) bool {
	return slices.ContainsFunc(p.phases, func(specs []Spec) bool { return slices.ContainsFunc(specs, pred) })
}

// Count is how many specs of kind the phases hold together.
func (p *Plan) Count(kind Kind) int {
	n := 0
	for _, specs := range p.phases {
		for _, s := range specs {
			if s.Kind == kind {
				n++
			}
		}
	}
	return n
}

// NeedsProxy reports whether some phase has a fault that works through a TCP proxy.
func (p *Plan) NeedsProxy() bool { return p.Any(Spec.NeedsProxy) }
