package profiles

import (
	"slices"

	"github.com/lockbench/lockbench/workload"
)

// kind is the YAML shape a setting takes.
type kind int

const (
	kindText       kind = iota // any scalar, carried as written: "zipf:1.1", "exp:1ms", "auto"
	kindInt                    // a whole number: 100
	kindNumber                 // a number: 5000, 2.5
	kindDuration               // a string with a unit: "10s", "500ms"
	kindStrategies             // a name, "a,b", "all", or a list of names
	kindStrategy               // exactly one strategy name (a phase's)
	kindFaults                 // a list of fault spec strings
	kindPhases                 // a list of phase mappings
)

// field is one key a profile may hold.
type field struct {
	name    string
	kind    kind
	example string        // a valid value, for messages
	doc     func() string // what it sets, for editors (schema/profile.json)
}

// doc is a fixed description.
func doc(s string) func() string { return func() string { return s } }

// topFields are a profile's top-level keys, in the order messages list them: strategy, the
// load settings a profile may set (workload.Settings, where each is declared: same names,
// same value syntax as the flags), topology, then faults and phases.
var topFields = slices.Concat(
	[]field{{"strategy", kindStrategies, "token,fenced", doc("strategies, one phase each: a name, \"a,b,c\", \"all\", or a list of names")}},
	settingFields(workload.Top),
	[]field{
		// --topology is services/redis's flag, not a load setting.
		{"topology", kindText, "single", doc("the Redis a spawned target runs: single, redlock, sentinel or cluster")},
		{"faults", kindFaults, `["holder-pause:p=0.05,d=600ms"]`, doc("fault specs injected in every phase (see lockbench faults)")},
		{"phases", kindPhases, "[{strategy: token}]", doc("explicit phases, each one strategy with the settings that differ for it")},
	},
)

// phaseFields are the keys of one entry of phases: its strategy and label, the settings
// that may differ by phase (workload.Settings), and its faults.
var phaseFields = slices.Concat(
	[]field{
		{"strategy", kindStrategy, "token", doc("the phase's one strategy")},
		{"label", kindText, "wd=auto", doc("tells phases of one strategy apart in reports")},
	},
	settingFields(workload.InPhase),
	[]field{{"faults", kindFaults, `["holder-pause:p=0.05,d=600ms"]`, doc("fault specs injected in this phase, besides the top-level ones")}},
)

// settingKinds are the YAML shapes of the settings' values.
var settingKinds = map[string]kind{
	workload.ShapeInteger: kindInt, workload.ShapeNumber: kindNumber, workload.ShapeDuration: kindDuration, workload.ShapeText: kindText,
}

// settingFields are the keys of the load settings that apply in place.
func settingFields(place workload.Place) []field {
	var out []field
	for _, s := range workload.Settings {
		if s.Is(place) {
			out = append(out, field{s.Name, settingKinds[s.Shape], s.Example, s.Usage})
		}
	}
	return out
}

// Field describes one key a profile may hold, for what documents or checks profiles outside
// this package: schema/profile.json, the JSON Schema editors complete profiles with, is
// generated from TopFields and PhaseFields.
type Field struct {
	Name    string
	Shape   string // how its value is written: one of the Shape constants
	Example string // a valid value, as YAML
	Doc     string // what it sets
}

// The shapes of a profile's values (Field.Shape).
const (
	ShapeText       = "text"       // any scalar, carried as written: "zipf:1.1", "exp:1ms", "auto"
	ShapeInteger    = "integer"    // a whole number: 100
	ShapeNumber     = "number"     // a number: 5000, 2.5
	ShapeDuration   = "duration"   // a string with a unit: "10s", "500ms"
	ShapeStrategies = "strategies" // a name, "a,b", "all", or a list of names
	ShapeStrategy   = "strategy"   // exactly one strategy name
	ShapeFaults     = "faults"     // a list of fault spec strings
	ShapePhases     = "phases"     // a list of phase mappings, each with PhaseFields
)

var shapes = [...]string{
	kindText: ShapeText, kindInt: ShapeInteger, kindNumber: ShapeNumber, kindDuration: ShapeDuration,
	kindStrategies: ShapeStrategies, kindStrategy: ShapeStrategy, kindFaults: ShapeFaults, kindPhases: ShapePhases,
}

// TopFields returns the keys a profile may hold at the top level, in schema order.
func TopFields() []Field { return exported(topFields) }

// PhaseFields returns the keys one entry of phases may hold.
func PhaseFields() []Field { return exported(phaseFields) }

func exported(fields []field) []Field {
	out := make([]Field, len(fields))
	for i, f := range fields {
		out[i] = Field{Name: f.name, Shape: shapes[f.kind], Example: f.example, Doc: f.doc()}
	}
	return out
}

// Keys returns the keys a profile may hold at the top level, in schema order. All but
// "faults" and "phases" are `lockbench run` flag names.
func Keys() []string { return names(topFields) }

// PhaseKeys returns the keys one phase may hold. All but "label" and "faults" are
// `lockbench run` flag names.
func PhaseKeys() []string { return names(phaseFields) }

func names(fields []field) []string {
	out := make([]string, len(fields))
	for i, f := range fields {
		out[i] = f.name
	}
	return out
}

// lookupField returns the field named name in fields.
func lookupField(fields []field, name string) (field, bool) {
	for _, f := range fields {
		if f.name == name {
			return f, true
		}
	}
	return field{}, false
}
