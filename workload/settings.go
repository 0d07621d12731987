package workload

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/lockbench/lockbench/strategies"
)

// Settings are the settings of a load command (run, sweep, capacity), each declared once
// here: its name, default, help, bound and where it applies. From this table come the
// flags (package main binds each to its Config field), the checks of what a user gave
// (Setting.Check, Setting.SetPhase and Config.Validate all judge by the setting's bound),
// the defaults Validate fills, the keys a profile may hold (package profiles, and from it
// schema/profile.json), the phase settings and the sweep's parameters.
//
// The order is the flags' order in --help and the profile keys' order in the schema.
// Adding a phase setting is a row here and its fields in Config and Phase; the engine then
// reads it from the Phase.
var Settings = []Setting{
	intSetting(Setting{Name: "workers", Short: "w", In: Everywhere | Sweepable, Example: "100", Want: "at least 1",
		Help: "goroutines contending for the locks (closed loop)"}, 100, atLeast(1),
		inBase(func(b *Base) *int { return &b.Workers }),
		func(ph *Phase, n int) {
			// --max-inflight defaults to --workers: a phase's own workers move it along,
			// unless it was set to something else.
			if ph.MaxInflight == ph.Workers {
				ph.MaxInflight = n
			}
		}),
	floatSetting(Setting{Name: "rate", Short: "r", In: Everywhere | Sweepable, Example: "5000",
		Want: "acquisitions/s from 0 (closed loop) to 10000000 (10M/s, far beyond what one Redis serves)",
		Help: "open loop: start this many acquisitions per second regardless of completions (0 = closed loop)"}, 0,
		func(r float64) bool { return r >= 0 && r <= MaxRate },
		inBase(func(b *Base) *float64 { return &b.Rate })),
	// A given 0 is refused, not taken for the default: an open loop with nothing in flight
	// would drop every arrival.
	typed(Setting{Name: "max-inflight", In: Flag | Top, Example: "1000", Want: "at least 1 (default --workers)",
		Help: "open loop: acquisitions in flight at most; an arrival beyond it is dropped (default --workers)"},
		intNoneKind(givenZero), ShapeInteger, 0, func(n int) bool { return n >= 1 || n == 0 },
		inRun(func(c *Config) *int { return &c.MaxInflight }), nil),
	intSetting(Setting{Name: "keys", Short: "k", In: Everywhere | Sweepable, Example: "1000", Want: "at least 1",
		Help: "distinct lock keys (1 = one hot key)"}, 1, atLeast(1),
		inBase(func(b *Base) *int { return &b.Keys }), nil),
	valueSetting(Setting{Name: "key-dist", In: Flag | Top, Example: "zipf:1.1",
		Help: "which key each acquisition takes: uniform or zipf[:S] (S > 1, default 1.1)"},
		inRun(func(c *Config) *KeyDist { return &c.KeyDist })),
	valueSetting(Setting{Name: "hold", In: Everywhere | Sweepable, Example: "exp:1ms",
		Help: "time inside the critical section: a duration (1ms), uniform:MIN..MAX or exp:MEAN"},
		inBase(func(b *Base) *Hold { return &b.Hold })),
	intSetting(Setting{Name: "reentry", In: Flag | Top, Example: "2",
		Want: fmt.Sprintf("from 0 to %d (each re-entry is a round trip inside the hold)", MaxReentry),
		Help: "nested re-acquires by the holder (reentrant strategies only)"}, 0, func(n int) bool { return n >= 0 && n <= MaxReentry },
		inRun(func(c *Config) *int { return &c.Reentry }), nil),
	floatSetting(Setting{Name: "read-ratio", In: Everywhere | Sweepable, Example: "0.9",
		Want: "a fraction from 0 to 1 (0.9 = 9 acquires in 10 are reads)",
		help: func() string {
			return "fraction of acquires that are reads, 0..1 (strategies with shared holds only: " + capacityList(strategies.CapacityRW) + ")"
		}}, 0,
		func(r float64) bool { return r >= 0 && r <= 1 },
		inBase(func(b *Base) *float64 { return &b.ReadRatio })),
	intSetting(Setting{Name: "permits", In: Everywhere | Sweepable, Example: "3", Want: "at least 1",
		help: func() string {
			return "holders one key admits (semaphores only: " + capacityList(strategies.CapacitySemaphore) + ")"
		}}, 1, atLeast(1),
		inBase(func(b *Base) *int { return &b.Permits }), nil),
	intSetting(Setting{Name: "lock-set", In: Everywhere | Sweepable, Example: "3", Want: "at least 1",
		help: func() string {
			return "distinct keys per acquire, at most --keys (lock sets only: " + capacityList(strategies.CapacitySet) + ")"
		}}, 1, atLeast(1),
		inBase(func(b *Base) *int { return &b.LockSet }), nil),
	durationSetting(Setting{Name: "duration", Short: "d", In: Flag | Top, Example: "10s",
		Want: "a duration of at least 100ms (a shorter window holds too few round trips to measure), e.g. 10s",
		Help: "measured time per phase"}, DefaultDuration, 0,
		func(d time.Duration) bool { return d >= MinDuration },
		inRun(func(c *Config) *time.Duration { return &c.Duration })),
	durationSetting(Setting{Name: "warmup", In: Flag | Top, Example: "1s", Want: "a duration >= 0 (0 = no warm-up)",
		Help: "unrecorded time before each measurement (0 = none)"}, time.Second, noWarmup,
		func(d time.Duration) bool { return d >= 0 || d == noWarmup },
		inRun(func(c *Config) *time.Duration { return &c.Warmup })),
	durationSetting(Setting{Name: "acquire-timeout", In: Flag | Top, Example: "5s",
		Want: "a duration > 0 of at least " + MinAcquireTimeout.String() + " (an acquire is a round trip to the lock service at least: a shorter timeout times every one out), e.g. 5s",
		Help: "give up one acquire after this long (counted as a timeout)"}, 5*time.Second, 0,
		func(d time.Duration) bool { return d >= MinAcquireTimeout },
		inRun(func(c *Config) *time.Duration { return &c.AcquireTimeout })),
	boundSetting(Setting{Name: "ttl", In: Everywhere | Sweepable, Example: "10s", Shape: ShapeDuration,
		Want: "a duration > 0, e.g. 10s (0 = no ttl, for setnx-expire)",
		Help: "lease time Redis keeps a lock (0 = none: setnx-expire without its EXPIRE)"},
		func(t strategies.TTL) bool { return t.Duration() > 0 || t.None() },
		inBase(func(b *Base) *strategies.TTL { return &b.TTL })),
	valueSetting(Setting{Name: "watchdog", In: Everywhere | Sweepable, Example: "auto",
		Help: "lease renewal: off, auto (= ttl/3, Redisson's default) or an interval below the ttl"},
		inBase(func(b *Base) *strategies.Watchdog { return &b.Watchdog })),
	valueSetting(Setting{Name: "wait", In: Everywhere | Sweepable, Example: "pubsub",
		Help: "how a blocked acquirer waits: native (each lock's own wait, as lockbench strategies shows), or lockbench's what-ifs spin[:INTERVAL], backoff[:MIN..MAX], pubsub"},
		inBase(func(b *Base) *strategies.Wait { return &b.Wait })),
	intSetting(Setting{Name: "wait-replicas", In: Flag, Want: "0 or more",
		Help: "after each acquire, WAIT until this many replicas have the lock (Redisson's check), narrowing the failover window"}, 0, atLeast(0),
		inRun(func(c *Config) *int { return &c.WaitReplicas }), nil),
	valueSetting(Setting{Name: "on-lost", In: Flag,
		Help: "before its last write, a holder whose lease may be gone: continue (as the articles' code does) or abort (check the watchdog and the lease's local deadline first; counted as aborted)"},
		inRun(func(c *Config) *OnLost { return &c.OnLost })),
	// procs is the command's (it starts the processes, fleet.go), not the engine's; its flag
	// sits with the fleet's own flags in --help.
	intSetting(Setting{Name: "procs", In: Everywhere, Example: "4", Want: "a whole number of processes >= 1 (1 = this process alone)",
		Help: "run as this many lockbench processes on this machine, --workers split among them (the first ones take one more each when it does not divide), each with its own clients and connections; one merged report with fairness across processes"}, 1, atLeast(1),
		inBase(func(b *Base) *int { return &b.Procs }), nil),
}

// Place says where a setting applies (Setting.In).
type Place uint8

const (
	// Flag: a flag of every load command (run, sweep, capacity).
	Flag Place = 1 << iota
	// Top: a key at a profile's top level.
	Top
	// InPhase: a key of a profile's phase, and a Phase field Config.Phase copies.
	InPhase
	// Sweepable: a parameter `lockbench sweep --param` may vary.
	Sweepable

	// Everywhere is a flag, a profile key at both levels.
	Everywhere = Flag | Top | InPhase
)

// Shapes of a setting's value as a profile writes it (Setting.Shape): profiles checks the
// YAML against them.
const (
	ShapeInteger  = "integer"  // a whole number: 100
	ShapeNumber   = "number"   // a number: 5000, 2.5
	ShapeDuration = "duration" // a string with a unit: "10s", "500ms"
	ShapeText     = "text"     // any scalar, carried as written: "zipf:1.1", "exp:1ms", "auto"
)

// Value is a setting's value as a flag holds it (a pflag.Value).
type Value interface {
	String() string
	Set(string) error
	Type() string
}

// Setting is one setting, declared once. The typed helpers (intSetting, floatSetting,
// durationSetting, valueSetting) fill the functions from the Config and Phase fields.
type Setting struct {
	Name  string
	Short string // one-letter flag, or ""
	In    Place
	Shape string // how a profile writes it: one of the Shape constants
	// Example is a valid value as a profile writes it, for messages and the schema.
	Example string
	// Help says what the setting does, for --help and the profile schema; help, when set,
	// builds it when asked (it names registered strategies, which register after this table).
	Help string
	help func() string
	// Want is what a valid value is, as its errors say: "invalid --keys 0: want at least 1".
	// Settings whose value type checks itself (Hold, Wait, ...) have none.
	Want string

	field func(*Config) Value        // the setting in c, as a flag value
	fill  func(*Config)              // sets the default where c has the zero value
	check func(*Config) error        // judges the value in c by the bound
	phase func(*Phase) error         // fills the default in ph and judges the value by the bound; nil off InPhase
	set   func(*Phase, string) error // parses, judges and sets a phase's value
	get   func(*Phase) string        // a phase's value as the flag prints it: one text per value
}

// Usage is the help text.
func (s Setting) Usage() string {
	if s.help != nil {
		return s.help()
	}
	return s.Help
}

// Is reports whether s applies in every place of p.
func (s Setting) Is(p Place) bool { return s.In&p == p }

// Value is the setting's field in c as a flag value, for binding it to a flag.
func (s Setting) Value(c *Config) Value { return s.field(c) }

// Fill sets the setting's default in c where c holds the zero value.
func (s Setting) Fill(c *Config) { s.fill(c) }

// Check judges the setting's value in c; the error (a *ConfigError) names the flag and
// what it wants: "invalid --keys 0: want at least 1".
func (s Setting) Check(c *Config) error { return s.check(c) }

// SetPhase parses v as the flag does, judges it and sets it on ph. The error says what a
// valid value is, without the setting's name: the caller names the field as its input
// spelled it (--workers, a profile's line, --param workers=0).
func (s Setting) SetPhase(ph *Phase, v string) error {
	if s.set == nil {
		return fmt.Errorf("a phase cannot set %s", s.Name)
	}
	return s.set(ph, v)
}

// LookupSetting returns the setting named name.
func LookupSetting(name string) (Setting, bool) {
	for _, s := range Settings {
		if s.Name == name {
			return s, true
		}
	}
	return Setting{}, false
}

// The bounds the table's checks name.
const (
	// MinDuration is the shortest measured window.
	MinDuration = 100 * time.Millisecond
	// MaxRate is the highest open-loop rate, acquisitions/s.
	MaxRate = 10_000_000
	// noWarmup is Config.Warmup for none: the flag's 0 (Config's 0 is the default).
	noWarmup time.Duration = -1
	// givenZero is a count given as 0 where Config's 0 is the default (--max-inflight 0):
	// out of the bound, so refused as the user wrote it.
	givenZero = math.MinInt
	// MinAcquireTimeout is the shortest acquire timeout: a round trip on loopback takes
	// 50-200µs, and a loaded one milliseconds.
	MinAcquireTimeout = time.Millisecond
	// MaxReentry bounds --reentry: each re-entry is an acquire inside the hold.
	MaxReentry = 1000
)

func atLeast(n int) func(int) bool { return func(v int) bool { return v >= n } }

func capacityList(kind string) string { return strings.Join(CapacityStrategies(kind), ", ") }

// kind is how a value of T is read and written: as pflag reads and prints its own types,
// so that --help and the errors of the flag parser stay pflag's.
type kind[T comparable] struct {
	typ    string
	parse  func(string) (T, error)
	format func(T) string
	syntax string // what a value is written as, when a Want leaves it out: "a whole number"
}

var (
	intKind = kind[int]{"int", func(s string) (int, error) {
		v, err := strconv.ParseInt(s, 0, 64)
		return int(v), err
	}, strconv.Itoa, "a whole number"}
	floatKind = kind[float64]{"float64", func(s string) (float64, error) { return strconv.ParseFloat(s, 64) },
		func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }, "a number"}
)

// intNoneKind reads whole numbers, a given 0 held as none: Config's 0 is the default.
func intNoneKind(none int) kind[int] {
	k := intKind
	parse := k.parse
	k.parse = func(s string) (int, error) {
		v, err := parse(s)
		if err == nil && v == 0 {
			v = none
		}
		return v, err
	}
	k.format = func(v int) string {
		if v == none {
			v = 0
		}
		return strconv.Itoa(v)
	}
	return k
}

// durationKind reads durations; a given 0 means none, held as none (warmup: noWarmup) because a zero Config field means the default. 0 for none = 0.
func durationKind(none time.Duration) kind[time.Duration] {
	return kind[time.Duration]{"duration", func(s string) (time.Duration, error) {
		d, err := time.ParseDuration(s)
		if err == nil && d == 0 && none != 0 {
			d = none
		}
		return d, err
	}, func(d time.Duration) string {
		if d == none && none != 0 {
			d = 0
		}
		return d.String()
	}, ""}
}

// value is a Value over *p.
type value[T comparable] struct {
	p *T
	k *kind[T]
}

func (v value[T]) String() string { return v.k.format(*v.p) }
func (v value[T]) Type() string   { return v.k.typ }
func (v value[T]) Set(s string) error {
	x, err := v.k.parse(s)
	if err != nil {
		return err
	}
	*v.p = x
	return nil
}

// at is where a setting's value lives, the row's one accessor: in the run's Config (inRun),
// or in a phase's Base (inBase), the run's being Config.Base.
type at[T any] struct {
	run  func(*Config) *T
	base func(*Base) *T // nil for a setting of the run only
}

func inRun[T any](f func(*Config) *T) at[T] { return at[T]{run: f} }

func inBase[T any](f func(*Base) *T) at[T] {
	return at[T]{run: func(c *Config) *T { return f(&c.Base) }, base: f}
}

// typed builds a Setting of values of T from its fields: cfg in Config, ph in Phase (nil
// when the phase has none), def the default where Config holds the zero value, ok the bound
// (nil for none), onPhase what setting a phase's value does besides storing it (or nil).
func typed[T comparable](s Setting, k kind[T], shape string, def T, ok func(T) bool,
	a at[T], onPhase func(*Phase, T)) Setting {
	cfg := a.run
	s.Shape = shape
	var zero T
	s.field = func(c *Config) Value { return value[T]{cfg(c), &k} }
	s.fill = func(c *Config) {
		if p := cfg(c); *p == zero {
			*p = def
		}
	}
	bad := func(v T) error {
		return &ConfigError{Field: s.Name, Value: k.format(v), Reason: "want " + s.Want, bare: true}
	}
	s.check = func(c *Config) error {
		if v := *cfg(c); ok != nil && !ok(v) {
			return bad(v)
		}
		return nil
	}
	if a.base == nil {
		return s
	}
	ph := func(p *Phase) *T { return a.base(&p.Base) }
	s.get = func(p *Phase) string { return k.format(*ph(p)) }
	s.phase = func(p *Phase) error {
		v := ph(p)
		if *v == zero {
			*v = def // a Phase built by hand takes the defaults too
		}
		if ok != nil && !ok(*v) {
			return bad(*v)
		}
		return nil
	}
	s.set = func(p *Phase, text string) error {
		v, err := k.parse(text)
		switch {
		case err != nil && s.Want == "":
			return err // the type's own reason
		case err != nil && k.syntax != "" && !strings.HasPrefix(s.Want, "a "):
			return fmt.Errorf("want %s, %s", k.syntax, s.Want) // "want a whole number, at least 1"
		case err != nil || (ok != nil && !ok(v)):
			return fmt.Errorf("want %s", s.Want)
		}
		if onPhase != nil {
			onPhase(p, v)
		}
		*ph(p) = v
		return nil
	}
	return s
}

func intSetting(s Setting, def int, ok func(int) bool, a at[int], onPhase func(*Phase, int)) Setting {
	return typed(s, intKind, ShapeInteger, def, ok, a, onPhase)
}

func floatSetting(s Setting, def float64, ok func(float64) bool, a at[float64]) Setting {
	// NaN and the infinities are no rate or ratio, whatever the bound.
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) && ok(v) }
	return typed(s, floatKind, ShapeNumber, def, finite, a, nil)
}

// durationSetting's none is what a given 0 means when it is not the default (0 for none).
func durationSetting(s Setting, def, none time.Duration, ok func(time.Duration) bool, a at[time.Duration]) Setting {
	return typed(s, durationKind(none), ShapeDuration, def, ok, a, nil)
}

// boundSetting is a setting whose type parses itself (a pflag.Value) and whose zero value
// is its default, with a bound besides: the ttl, whose zero value is nobody's choice.
func boundSetting[T comparable, P interface {
	*T
	Value
}](s Setting, ok func(T) bool, a at[T]) Setting {
	shape := s.Shape
	var zero T
	s = typed(s, selfKind[T, P](), ShapeText, zero, ok, a, nil)
	s.Shape = shape
	return s
}

// selfKind is the kind of a type that parses and prints itself (a pflag.Value).
func selfKind[T comparable, P interface {
	*T
	Value
}]() kind[T] {
	return kind[T]{P(new(T)).Type(), func(text string) (T, error) {
		var v T
		err := P(&v).Set(text)
		return v, err
	}, func(v T) string { return P(&v).String() }, ""}
}

// valueSetting is a setting whose type parses and checks itself (a pflag.Value: Hold,
// KeyDist, Watchdog, Wait, OnLost); its zero value is its default.
func valueSetting[T comparable, P interface {
	*T
	Value
}](s Setting, a at[T]) Setting {
	var zero T
	return typed(s, selfKind[T, P](), ShapeText, zero, nil, a, nil)
}

// PhaseSetting is one setting a phase may carry its own value of. The flag of that name
// (its value copied into each phase by Config.Phase), a profile phase's key and a sweep's
// --param all set it through Set, so the three accept the same names and values and mean
// the same by them; a test holds the flags to it.
type PhaseSetting struct {
	Name string
	// Sweep tells whether `lockbench sweep --param` may vary it.
	Sweep bool
	// Set is Setting.SetPhase.
	Set func(ph *Phase, v string) error
	// Get is the phase's value as the flag prints it: two spellings of one value (1s,
	// 1000ms) read the same.
	Get func(ph *Phase) string
}

// PhaseSettings are the settings a phase may override (the InPhase rows of Settings), in
// the order help and errors list them.
var PhaseSettings = phaseSettings()

func phaseSettings() []PhaseSetting {
	var out []PhaseSetting
	for _, s := range Settings {
		if s.Is(InPhase) {
			out = append(out, PhaseSetting{Name: s.Name, Sweep: s.Is(Sweepable), Set: s.SetPhase, Get: s.get})
		}
	}
	return out
}

// LookupPhaseSetting returns the phase setting named name.
func LookupPhaseSetting(name string) (PhaseSetting, bool) {
	for _, s := range PhaseSettings {
		if s.Name == name {
			return s, true
		}
	}
	return PhaseSetting{}, false
}

// sweepParams are the names of the settings a sweep may vary.
func sweepParams() []string {
	var out []string
	for _, s := range PhaseSettings {
		if s.Sweep {
			out = append(out, s.Name)
		}
	}
	return out
}
