package profiles

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
	example string // a valid value, for messages
}

// topFields are a profile's top-level keys, in the order messages list them: the run flags
// (same names, same value syntax), then faults and phases.
var topFields = []field{
	{"strategy", kindStrategies, "token,fenced"},
	{"workers", kindInt, "100"},
	{"rate", kindNumber, "5000"},
	{"max-inflight", kindInt, "1000"},
	{"keys", kindInt, "1000"},
	{"key-dist", kindText, "zipf:1.1"},
	{"hold", kindText, "exp:1ms"},
	{"reentry", kindInt, "2"},
	{"duration", kindDuration, "10s"},
	{"warmup", kindDuration, "1s"},
	{"acquire-timeout", kindDuration, "5s"},
	{"ttl", kindDuration, "10s"},
	{"watchdog", kindText, "auto"},
	{"wait", kindText, "pubsub"},
	{"topology", kindText, "single"},
	{"faults", kindFaults, `["holder-pause:p=0.05,d=600ms"]`},
	{"phases", kindPhases, "[{strategy: token}]"},
}

// phaseFields are the keys of one entry of phases: the settings that may differ by phase.
var phaseFields = []field{
	{"strategy", kindStrategy, "token"},
	{"label", kindText, "wd=auto"},
	{"ttl", kindDuration, "10s"},
	{"watchdog", kindText, "auto"},
	{"wait", kindText, "pubsub"},
	{"workers", kindInt, "100"},
	{"rate", kindNumber, "5000"},
	{"keys", kindInt, "1000"},
	{"hold", kindText, "exp:1ms"},
	{"faults", kindFaults, `["holder-pause:p=0.05,d=600ms"]`},
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
