package workload

import (
	"errors"
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
		ShapeInteger, row[int]{k: intNoneKind(givenZero), ok: func(n int) bool { return n >= 1 || n == 0 }},
		inRun(func(c *Config) *int { return &c.MaxInflight })),
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
	lockSetting(Setting{Name: "ttl", In: Everywhere | Sweepable, Example: "10s", Shape: ShapeDuration,
		Want: strategies.TTLWant,
		Help: "lease time Redis keeps a lock (0 = none: setnx-expire without its EXPIRE)"},
		strategies.CheckTTL, inBase(func(b *Base) *strategies.TTL { return &b.TTL })),
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

	// at is the setting's value in c (ph nil) or in ph, as a field of the row's type; nil
	// for a phase when the setting is the run's only. It is the row's one accessor.
	at func(c *Config, ph *Phase) field
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
func (s Setting) Value(c *Config) Value { return s.at(c, nil) }

// Fill sets the setting's default in c where c holds the zero value.
func (s Setting) Fill(c *Config) { s.at(c, nil).fill() }

// Check judges the value given for the setting in c, as a flag or a profile's top level
// writes it; the error (a *ConfigError) names the flag and what it wants: "invalid --keys
// 0: want at least 1". A lock parameter's value is judged by the one check Settle makes of
// each phase's (the ttl: strategies.CheckTTL), so that a bad one is named where written.
func (s Setting) Check(c *Config) error { return s.at(c, nil).judge(true) }

// SetPhase parses v as the flag does, judges it as Check does and sets it on ph. The error
// says what a valid value is, without the setting's name: the caller names the field as
// its input spelled it (--workers, a profile's line, --param workers=0).
func (s Setting) SetPhase(ph *Phase, v string) error {
	f := s.at(nil, ph)
	if f == nil {
		return fmt.Errorf("a phase cannot set %s", s.Name)
	}
	return f.setPhase(ph, v)
}

// get is a phase's value as the flag prints it: one text per value.
func (s Setting) get(ph *Phase) string { return s.at(nil, ph).String() }

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

// row is what a setting of values of T declares besides its accessor: its kind, default,
// bound, and what a phase's value does besides being stored.
type row[T comparable] struct {
	name, want string
	k          kind[T]
	def        T
	ok         func(T) bool // the bound; nil for none
	// settled is a lock parameter's check, the one strategies.Settle makes of each
	// phase's value (the ttl: strategies.CheckTTL), run here on a value where it is
	// written; nil for the other settings.
	settled func(T) error
	onPhase func(*Phase, T)
}

// value is a setting's field *p, of its row's type: a flag's Value, with the row's
// default, bound and phase setting.
type value[T comparable] struct {
	p *T
	r *row[T]
}

// field is a value[T] of any T.
type field interface {
	Value
	fill()
	judge(given bool) error
	setPhase(ph *Phase, text string) error
}

func (v value[T]) String() string { return v.r.k.format(*v.p) }
func (v value[T]) Type() string   { return v.r.k.typ }
func (v value[T]) Set(s string) error {
	x, err := v.r.k.parse(s)
	if err != nil {
		return err
	}
	*v.p = x
	return nil
}

// fill sets the default where the field holds the zero value.
func (v value[T]) fill() {
	if *v.p == *new(T) {
		*v.p = v.r.def
	}
}

// judge checks the value by the row's bound. A given value (a flag's, a profile's) a
// lock parameter's check judges too; a phase's it leaves to Settle.
func (v value[T]) judge(given bool) error {
	r := v.r
	if r.ok != nil && !r.ok(*v.p) {
		return BadSetting(r.name, v.String(), "want "+r.want)
	}
	if given && r.settled != nil {
		return settingError(r.settled(*v.p))
	}
	return nil
}

// setPhase parses, judges and sets a phase's value (Setting.SetPhase).
func (v value[T]) setPhase(ph *Phase, text string) error {
	r := v.r
	x, err := r.k.parse(text)
	switch {
	case err != nil && r.want == "":
		return err // the type's own reason
	case err != nil && r.k.syntax != "" && !strings.HasPrefix(r.want, "a "):
		return fmt.Errorf("want %s, %s", r.k.syntax, r.want) // "want a whole number, at least 1"
	case err != nil || (r.ok != nil && !r.ok(x)):
		return fmt.Errorf("want %s", r.want)
	case r.settled != nil:
		var oe *strategies.OptionError
		if err := r.settled(x); errors.As(err, &oe) {
			return errors.New(oe.Reason) // "want a duration of at least 1ms, ..."
		} else if err != nil {
			return err
		}
	}
	if r.onPhase != nil {
		r.onPhase(ph, x)
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

// typed builds a Setting of values of T from its row r and its one accessor a.
func typed[T comparable](s Setting, shape string, r row[T], a at[T]) Setting {
	s.Shape = shape
	r.name, r.want = s.Name, s.Want
	s.at = func(c *Config, ph *Phase) field {
		switch {
		case ph == nil:
			return value[T]{a.run(c), &r}
		case a.base == nil:
			return nil
		}
		return value[T]{a.base(&ph.Base), &r}
	}
	return s
}

func intSetting(s Setting, def int, ok func(int) bool, a at[int], onPhase func(*Phase, int)) Setting {
	return typed(s, ShapeInteger, row[int]{k: intKind, def: def, ok: ok, onPhase: onPhase}, a)
}

func floatSetting(s Setting, def float64, ok func(float64) bool, a at[float64]) Setting {
	// NaN and the infinities are no rate or ratio, whatever the bound.
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) && ok(v) }
	return typed(s, ShapeNumber, row[float64]{k: floatKind, def: def, ok: finite}, a)
}

// durationSetting's none is what a given 0 means when it is not the default (0 for none).
func durationSetting(s Setting, def, none time.Duration, ok func(time.Duration) bool, a at[time.Duration]) Setting {
	return typed(s, ShapeDuration, row[time.Duration]{k: durationKind(none), def: def, ok: ok}, a)
}

// lockSetting is a lock parameter whose type parses itself (a pflag.Value) and whose zero
// value is its default, with a check of its own in package strategies besides: the ttl,
// whose zero value is nobody's choice. Settle makes the check of each phase's value; the
// row makes it of a value where it is written, so that the error points there.
func lockSetting[T comparable, P interface {
	*T
	Value
}](s Setting, check func(T) error, a at[T]) Setting {
	return typed(s, s.Shape, row[T]{k: selfKind[T, P](), settled: check}, a)
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
	return typed(s, ShapeText, row[T]{k: selfKind[T, P]()}, a)
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
