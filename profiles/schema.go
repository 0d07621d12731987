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
	doc     string // what it sets, for editors (schema/profile.json)
}

// topFields are a profile's top-level keys, in the order messages list them: the run flags
// (same names, same value syntax), then faults and phases.
var topFields = []field{
	{"strategy", kindStrategies, "token,fenced", "strategies, one phase each: a name, \"a,b,c\", \"all\", or a list of names"},
	{"workers", kindInt, "100", "goroutines contending for the locks (closed loop)"},
	{"rate", kindNumber, "5000", "open loop: acquisitions started per second regardless of completions (0 = closed loop)"},
	{"max-inflight", kindInt, "1000", "open loop: acquisitions in flight at most; an arrival beyond it is dropped (default: workers)"},
	{"keys", kindInt, "1000", "distinct lock keys (1 = one hot key)"},
	{"key-dist", kindText, "zipf:1.1", "which key each acquisition takes: uniform or zipf[:S] (S > 1, default 1.1)"},
	{"hold", kindText, "exp:1ms", "time inside the critical section: a duration (1ms), uniform:MIN..MAX or exp:MEAN"},
	{"reentry", kindInt, "2", "nested re-acquires by the holder (reentrant strategies only)"},
	{"read-ratio", kindNumber, "0.9", "fraction of acquires that are reads, 0..1 (strategies with shared holds only: rw-lock)"},
	{"permits", kindInt, "3", "holders one key admits (semaphores only)"},
	{"lock-set", kindInt, "3", "distinct keys per acquire, at most keys (lock sets only: multilock)"},
	{"duration", kindDuration, "10s", "measured time per phase, with a unit (10s)"},
	{"warmup", kindDuration, "1s", "unrecorded time before each measurement, with a unit (0s = none)"},
	{"acquire-timeout", kindDuration, "5s", "give up one acquire after this long (counted as a timeout)"},
	{"ttl", kindDuration, "10s", "lease time Redis keeps a lock, with a unit"},
	{"watchdog", kindText, "auto", "lease renewal: off, auto (= ttl/3) or an interval below the ttl"},
	{"wait", kindText, "pubsub", "how a blocked acquirer waits: spin[:INTERVAL], backoff[:MIN..MAX] or pubsub"},
	{"procs", kindInt, "4", "run as this many lockbench processes on this machine, the workers split among them (--procs)"},
	{"topology", kindText, "single", "the Redis a spawned target runs: single, redlock, sentinel or cluster"},
	{"faults", kindFaults, `["holder-pause:p=0.05,d=600ms"]`, "fault specs injected in every phase (see lockbench faults)"},
	{"phases", kindPhases, "[{strategy: token}]", "explicit phases, each one strategy with the settings that differ for it"},
}

// phaseFields are the keys of one entry of phases: the settings that may differ by phase.
var phaseFields = []field{
	{"strategy", kindStrategy, "token", "the phase's one strategy"},
	{"label", kindText, "wd=auto", "tells phases of one strategy apart in reports"},
	{"ttl", kindDuration, "10s", "lease time Redis keeps a lock, with a unit"},
	{"watchdog", kindText, "auto", "lease renewal: off, auto (= ttl/3) or an interval below the ttl"},
	{"wait", kindText, "pubsub", "how a blocked acquirer waits: spin[:INTERVAL], backoff[:MIN..MAX] or pubsub"},
	{"workers", kindInt, "100", "goroutines contending for the locks (closed loop)"},
	{"rate", kindNumber, "5000", "open loop: acquisitions started per second regardless of completions (0 = closed loop)"},
	{"keys", kindInt, "1000", "distinct lock keys (1 = one hot key)"},
	{"hold", kindText, "exp:1ms", "time inside the critical section: a duration (1ms), uniform:MIN..MAX or exp:MEAN"},
	{"read-ratio", kindNumber, "0.9", "fraction of acquires that are reads, 0..1 (strategies with shared holds only: rw-lock)"},
	{"permits", kindInt, "3", "holders one key admits (semaphores only)"},
	{"lock-set", kindInt, "3", "distinct keys per acquire, at most keys (lock sets only: multilock)"},
	{"procs", kindInt, "4", "run this phase as this many lockbench processes, the workers split among them"},
	{"faults", kindFaults, `["holder-pause:p=0.05,d=600ms"]`, "fault specs injected in this phase, besides the top-level ones"},
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
		out[i] = Field{Name: f.name, Shape: shapes[f.kind], Example: f.example, Doc: f.doc}
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
