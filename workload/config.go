// Package workload is lockbench's engine: it drives strategies with many goroutines on hot
// keys, one strategy per phase, measures every step into sharded HDR histograms, and checks
// with an oracle of its own whether mutual exclusion held.
package workload

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lockbench/lockbench/internal/usage"
	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/strategies"
)

// Config is one run. Zero values take the defaults documented per field (declared with the
// setting in Settings); Validate fills them and reports what it cannot use as a
// *ConfigError naming the field (the CLI flag).
//
// A run is a list of phases, one strategy each, run one after the other on fresh keys. The
// settings below are the run's; a Phase may override the ones it carries. When Phases is
// empty, Validate makes one phase per entry of Strategies with the run's settings.
type Config struct {
	// Strategies are run one per phase, in order. Default: token.
	Strategies []string
	// Phases, when set, replace Strategies (profiles and sweeps build them).
	Phases []Phase
	// Base is the run's phase settings, its load and its lock parameters: every phase starts
	// as a copy of it (Config.Phase), which its own values then override.
	Base
	// Reentry is the number of nested re-acquires a holder makes, for reentrant strategies.
	Reentry int
	// KeyDist picks which key each acquisition targets. Default uniform.
	KeyDist KeyDist
	// Duration is the measured time per phase. Default 10s.
	Duration time.Duration
	// Warmup runs before each phase's measured window and is not recorded. Default 1s.
	// Negative means none.
	Warmup time.Duration
	// AcquireTimeout bounds one acquire, waiting included. Default 5s.
	AcquireTimeout time.Duration
	// Faults are the fault specs of every phase (a Phase adds its own); the engine hands
	// them to Options.Faults and reports them.
	Faults []string
	// KeyPrefix starts every key of the run; each phase adds its own part. Default
	// "lockbench:<random>:", or the barrier's shared prefix.
	KeyPrefix string
	// Barrier, when set, runs this process as one of several that meet before and after
	// every phase (multi-machine runs).
	Barrier *Barrier
	// OnLost is what a holder does when its lease may be gone before its last write.
	// Default OnLostContinue.
	OnLost OnLost

	// validated: Validate accepted this Config, so Run and Capacity do not check it again.
	// Who changes a validated Config keeps it valid (SweepPhases checks the phases it makes).
	validated bool
}

// OnLost is what a holder does before its last write to the resource when its lease may be
// gone.
type OnLost int

const (
	// OnLostContinue writes regardless, as the articles' code does.
	OnLostContinue OnLost = iota
	// OnLostAbort checks the lease first — its watchdog's verdict (Lost) and its local
	// deadline (acquired + ttl - drift, moved by each renewal) — and abandons the write when
	// either says it is gone. It narrows the window for a stale write; it cannot close it:
	// a pause between the check and the write still lets one through.
	OnLostAbort
)

// OnLostValues are the valid --on-lost values.
var OnLostValues = []string{"continue", "abort"}

// ParseOnLost reads "continue" or "abort".
func ParseOnLost(s string) (OnLost, error) {
	switch s {
	case "continue":
		return OnLostContinue, nil
	case "abort":
		return OnLostAbort, nil
	}
	return 0, &ConfigError{Field: "on-lost", Value: s, Reason: "want " + strings.Join(OnLostValues, " or ")}
}

func (o OnLost) String() string { return OnLostValues[o] }

// Set and Type make OnLost a flag value (pflag.Value).
func (o *OnLost) Set(s string) error {
	v, err := ParseOnLost(s)
	if err != nil {
		return err
	}
	*o = v
	return nil
}

func (o *OnLost) Type() string { return "continue|abort" }

// Phase is one strategy driven for one measured window, with its own settings. Build one
// with Config.Phase, which copies the run's settings, then override what differs.
type Phase struct {
	Strategy string
	// Label tells phases of one strategy apart in reports ("wd=auto", "ttl=200ms").
	Label string
	// ParamValue is the swept parameter's value, for sweeps.
	ParamValue string
	// Base is the phase's settings: its load and its lock parameters.
	Base
	Faults []string
}

// Base is a phase's settings, as two records: the load it drives and its lock's
// parameters. A run holds one (Config.Base) that every phase starts from.
type Base struct {
	Load
	Lock
}

// Lock is a phase's lock parameters (--ttl, --watchdog, --wait, --wait-replicas): what its
// strategy is built with besides the connection. Validate settles them (strategies.Settle):
// defaulted and checked once, the lease's milliseconds and script arguments made once.
type Lock = strategies.Params

// Load is the load a phase drives. Zero values take the defaults documented per field
// (declared with the setting in Settings).
type Load struct {
	// Workers is the number of goroutines (closed loop) or the default MaxInflight (open
	// loop). Default 100.
	Workers int
	// Rate, when > 0, switches to an open loop: acquisitions start at this many per second
	// regardless of how fast earlier ones finish. Default 0 (closed loop).
	Rate float64
	// MaxInflight caps concurrent acquisitions in the open loop; an arrival that finds all
	// busy is counted as dropped. Default Workers.
	MaxInflight int
	// Keys is the number of distinct lock keys. Default 1 (one hot key).
	Keys int
	// Hold is how long a holder stays in the critical section. Default 0.
	Hold Hold
	// ReadRatio is the fraction of acquires that are reads (0..1), for a strategy that takes
	// shared holds (strategies.SharedLocker: Capacity rw). Default 0: every acquire writes.
	ReadRatio float64
	// Permits is how many holders one key of a semaphore admits (strategies.Options.Permits;
	// Capacity semaphore only). Default 1.
	Permits int
	// LockSet is how many keys one acquire takes together, for a strategy that locks sets
	// (strategies.SetLocker: Capacity set); at most Keys. Default 1.
	LockSet int
	// Procs is how many lockbench processes run the load on this machine (--procs), the
	// workers split among them; the command starts them, the engine runs one. Default 1.
	Procs int
}

// DefaultDuration is the measured time per phase when none is given.
const DefaultDuration = 10 * time.Second

// warmup is the warm-up time, 0 for none.
func (c *Config) warmup() time.Duration { return max(c.Warmup, 0) }

// Phase returns a phase of strategy with the run's settings (the InPhase rows of Settings).
// Call it after Validate, or on a Config whose settings are already final; a setting still
// at its zero value takes its default when the phase is validated.
func (c *Config) Phase(strategy string) Phase {
	return Phase{Strategy: strategy, Base: c.Base, Faults: slices.Clone(c.Faults)}
}

// ConfigError is a configuration value the engine cannot use.
type ConfigError struct {
	Field  string // the CLI flag, without dashes
	Value  string
	Reason string // including the valid values

	bare bool // the value as the flag takes it, unquoted: a setting out of its bound
}

// BadSetting is the error of a setting's value the setting refuses, as the flag takes it:
// invalid --NAME VALUE: REASON.
func BadSetting(name, value, reason string) *ConfigError {
	return &ConfigError{Field: name, Value: value, Reason: reason, bare: true}
}

// ExitCode is usage.ExitCode: the caller's input is wrong, as a command line reports it.
func (e *ConfigError) ExitCode() int { return usage.ExitCode }

func (e *ConfigError) Error() string {
	if e.bare {
		return fmt.Sprintf("invalid --%s %s: %s", e.Field, e.Value, e.Reason)
	}
	return fmt.Sprintf("invalid --%s %q: %s", e.Field, e.Value, e.Reason)
}

// Validate fills defaults and checks the configuration, phases included, without talking
// to Redis: every setting by its bound (Settings), strategy options (ttl, watchdog, wait)
// against the strategy, and the rules that join settings. Run and Capacity validate a
// Config that was not validated yet; one that was they take as it is. A second call
// changes nothing (a negative Warmup, none, stays none), so that a caller may change a
// validated Config and validate it again.
func (c *Config) Validate() error {
	for _, s := range Settings {
		s.Fill(c)
	}
	for _, s := range Settings {
		// A lock parameter's check Settle makes of each phase's value, below.
		if err := s.at(c, nil).judge(false); err != nil {
			return err
		}
	}
	if len(c.Phases) == 0 {
		if len(c.Strategies) == 0 {
			c.Strategies = []string{"token"}
		}
		for _, s := range c.Strategies {
			c.Phases = append(c.Phases, c.Phase(s))
		}
	}
	// A new slice, not c.Strategies[:0]: copies of a Config share its array, and two
	// validated side by side (a test's parallel runs) would write into one.
	c.Strategies = make([]string, 0, len(c.Phases))
	reentrant := false
	for i := range c.Phases {
		ph := &c.Phases[i]
		if err := ph.validate(); err != nil {
			return err
		}
		if err := c.holdFits(ph); err != nil {
			return err
		}
		c.Strategies = append(c.Strategies, ph.Strategy)
		info, _ := strategies.Lookup(ph.Strategy)
		reentrant = reentrant || info.Reentrant
	}
	if c.Reentry > 0 && !reentrant {
		return &ConfigError{Field: "reentry", Value: strconv.Itoa(c.Reentry),
			Reason: "needs a reentrant strategy; valid: reentrant-local, reentrant-hash"}
	}
	if err := c.Barrier.validate(); err != nil {
		return err
	}
	switch {
	case c.Barrier != nil:
		c.KeyPrefix = c.Barrier.prefix() // the processes must contend for the same keys
	case c.KeyPrefix == "":
		c.KeyPrefix = fmt.Sprintf("lockbench:%08x:", rand.Uint32())
	}
	c.validated = true
	return nil
}

// validate validates c unless Validate has accepted it already.
func (c *Config) validate() error {
	if c.validated {
		return nil
	}
	return c.Validate()
}

// validate fills a phase's defaults and checks its settings, each by its bound, then the
// rules that join them.
func (ph *Phase) validate() error {
	if _, err := strategies.Resolve(ph.Strategy); err != nil {
		var oe *strategies.OptionError
		if errors.As(err, &oe) && oe.Field == "strategy" {
			return &ConfigError{Field: "strategy", Value: ph.Strategy, Reason: oe.Reason}
		}
		return err
	}
	for _, s := range Settings {
		if f := s.at(nil, ph); f != nil {
			f.fill() // a Phase built by hand takes the defaults too
			if err := f.judge(false); err != nil {
				return err
			}
		}
	}
	if ph.MaxInflight == 0 {
		ph.MaxInflight = ph.Workers
	}
	if ph.MaxInflight < 0 {
		return &ConfigError{Field: "max-inflight", Value: strconv.Itoa(ph.MaxInflight), Reason: "must be at least 1"}
	}
	if err := ph.validateCapacity(); err != nil {
		return err
	}
	// The lock parameters' one check: the ttl, watchdog, wait, ... against the strategy.
	lock, err := strategies.Settle(ph.Strategy, ph.Lock)
	if err != nil {
		return settingError(err)
	}
	ph.Lock = lock // settled once: the engine builds the strategy with it as it is
	return nil
}

// settingError is a strategies.OptionError about a setting named as its flag, as every
// setting's error is (invalid --ttl -1s: want ...); other errors as they are.
func settingError(err error) error {
	var oe *strategies.OptionError
	if errors.As(err, &oe) {
		if _, setting := LookupSetting(oe.Field); setting {
			return BadSetting(oe.Field, oe.Value, oe.Reason)
		}
	}
	return err
}

// CheckMaxInflight refuses a --max-inflight given to a run without an open loop: no rate of
// its own nor of a phase, and ramped false (capacity's ramp sets a rate per step). In a
// closed loop --workers is what runs at once. Call it after Validate.
func (c *Config) CheckMaxInflight(ramped bool) error {
	if c.MaxInflight == 0 || ramped || c.Rate > 0 || slices.ContainsFunc(c.Phases, func(ph Phase) bool { return ph.Rate > 0 }) {
		return nil
	}
	return BadSetting("max-inflight", strconv.Itoa(c.MaxInflight), "it bounds the open loop (--rate); in a closed loop --workers is what runs at once")
}

// holdFits refuses a hold that outlasts the phase: one longer than the warm-up, the
// window and the drain together is cut short at the phase's end every time, and no cycle
// is measured (--hold 1000h in a 300ms window). A hold longer than the window alone is
// allowed: it keeps its holders inside past the window's end, which a safety experiment
// may want (who enters while they hold is still seen), at the cost of measuring few cycles.
func (c *Config) holdFits(ph *Phase) error {
	phase := c.warmup() + c.Duration + drainGrace
	if mean := ph.Hold.MeanDuration(); mean > phase {
		return &ConfigError{Field: "hold", Value: ph.Hold.String(), bare: true,
			Reason: fmt.Sprintf("the hold outlasts the whole phase (%s warm-up, %s measured window, %s to drain): every hold would be cut short and no cycle measured; want a hold shorter than --duration, or a longer --duration",
				c.warmup(), c.Duration, drainGrace)}
	}
	return nil
}

// validateCapacity checks the settings only some locks take: --read-ratio (shared holds),
// --permits (semaphores) and --lock-set (lock sets), each refused on the other strategies
// unless at its default. Their bounds are checked already (Settings).
func (ph *Phase) validateCapacity() error {
	info, _ := strategies.Lookup(ph.Strategy)
	only := func(field, value, kind, what string) error {
		return &ConfigError{Field: field, Value: value, Reason: fmt.Sprintf("%s; %s does not take it; valid for: %s",
			what, ph.Strategy, strings.Join(CapacityStrategies(kind), ", "))}
	}
	ratio := strconv.FormatFloat(ph.ReadRatio, 'g', -1, 64)
	switch {
	case ph.ReadRatio != 0 && info.Capacity != strategies.CapacityRW:
		return only("read-ratio", ratio, strategies.CapacityRW, "only a lock with shared holds has reads")
	case ph.Permits != 1 && info.Capacity != strategies.CapacitySemaphore:
		return only("permits", strconv.Itoa(ph.Permits), strategies.CapacitySemaphore, "only a semaphore has permits")
	case ph.LockSet != 1 && info.Capacity != strategies.CapacitySet:
		return only("lock-set", strconv.Itoa(ph.LockSet), strategies.CapacitySet, "only a lock set takes several keys at once")
	case ph.LockSet > ph.Keys:
		return &ConfigError{Field: "lock-set", Value: strconv.Itoa(ph.LockSet),
			Reason: fmt.Sprintf("must be at most --keys (%d): the keys of a set are distinct", ph.Keys)}
	}
	return nil
}

// CapacityStrategies are the registered strategies of capacity kind (strategies.Info.Capacity),
// which take the settings only such locks have.
func CapacityStrategies(kind string) []string {
	var out []string
	for _, n := range strategies.Names() {
		if info, _ := strategies.Lookup(n); info.Capacity == kind {
			out = append(out, n)
		}
	}
	return out
}

// Concurrency is how many workers the phase runs: MaxInflight in the open loop.
func (ph *Phase) Concurrency() int {
	if ph.Rate > 0 {
		return ph.MaxInflight
	}
	return ph.Workers
}

// KeyDist is a key distribution: "uniform" or "zipf[:S]" with S > 1 (default 1.1; larger S
// concentrates more acquisitions on the first keys). It implements pflag.Value.
type KeyDist struct {
	Zipf bool
	S    float64
}

const defaultZipfS = 1.1

func (d KeyDist) String() string {
	if d.Zipf {
		return "zipf:" + strconv.FormatFloat(d.S, 'g', -1, 64)
	}
	return "uniform"
}

// Set parses a distribution.
func (d *KeyDist) Set(s string) error {
	name, arg, hasArg := strings.Cut(s, ":")
	switch {
	case name == "uniform" && !hasArg:
		*d = KeyDist{}
		return nil
	case name == "zipf":
		v := KeyDist{Zipf: true, S: defaultZipfS}
		if hasArg {
			f, err := strconv.ParseFloat(arg, 64)
			if err != nil || !(f > 1) || math.IsInf(f, 0) {
				return errors.New("the zipf exponent must be a number S > 1; valid: uniform, zipf[:S]")
			}
			v.S = f
		}
		*d = v
		return nil
	}
	return errors.New("valid: uniform, zipf[:S] (S > 1, default 1.1)")
}

// Type names the value for --help.
func (*KeyDist) Type() string { return "dist" }

// picker returns a per-worker key chooser over n keys; not safe for concurrent use. It is a
// value the worker keeps, not a closure: a million workers start a million of them.
func (d KeyDist) picker(n int, r *rand.Rand) keyPicker {
	k := keyPicker{n: n, r: r}
	if d.Zipf && n > 1 {
		k.zipf = rand.NewZipf(r, d.S, 1, uint64(n-1))
	}
	return k
}

// keyPicker draws key indexes with a KeyDist.
type keyPicker struct {
	n    int
	r    *rand.Rand
	zipf *rand.Zipf // nil: uniform
}

func (k *keyPicker) pick() int {
	switch {
	case k.n == 1:
		return 0
	case k.zipf != nil:
		return int(k.zipf.Uint64())
	}
	return k.r.IntN(k.n)
}

// Hold is a hold-time distribution: a fixed duration ("1ms", "0"), "uniform:MIN..MAX" or
// "exp:MEAN" (exponential). It implements pflag.Value.
type Hold struct {
	Kind     HoldKind
	Min, Max time.Duration // fixed: Min; uniform: [Min, Max]
	Mean     time.Duration // exp
}

// HoldKind selects a hold-time distribution.
type HoldKind int

const (
	HoldFixed HoldKind = iota
	HoldUniform
	HoldExp
)

func (h Hold) String() string {
	switch h.Kind {
	case HoldUniform:
		return "uniform:" + h.Min.String() + ".." + h.Max.String()
	case HoldExp:
		return "exp:" + h.Mean.String()
	}
	return h.Min.String()
}

const holdForms = "valid: a duration (1ms), uniform:MIN..MAX, exp:MEAN"

// Set parses a hold-time distribution.
func (h *Hold) Set(s string) error {
	bad := func(reason string) error { return errors.New(reason + "; " + holdForms) }
	name, arg, hasArg := strings.Cut(s, ":")
	switch {
	case !hasArg:
		d, err := parseDuration(s)
		if err != nil || d < 0 {
			return bad("not a duration >= 0")
		}
		*h = Hold{Kind: HoldFixed, Min: d}
	case name == "uniform":
		lo, hi, ok := strings.Cut(arg, "..")
		if !ok {
			return bad("uniform needs MIN..MAX")
		}
		a, err1 := parseDuration(lo)
		b, err2 := parseDuration(hi)
		if err1 != nil || err2 != nil || a < 0 || b < a {
			return bad("uniform needs 0 <= MIN <= MAX")
		}
		*h = Hold{Kind: HoldUniform, Min: a, Max: b}
	case name == "exp":
		m, err := parseDuration(arg)
		if err != nil || m <= 0 {
			return bad("exp needs a mean > 0")
		}
		*h = Hold{Kind: HoldExp, Mean: m}
	default:
		return bad("unknown distribution " + strconv.Quote(name))
	}
	return nil
}

// Type names the value for --help.
func (*Hold) Type() string { return "hold" }

// MeanDuration is the distribution's expected value.
func (h Hold) MeanDuration() time.Duration {
	switch h.Kind {
	case HoldUniform:
		return (h.Min + h.Max) / 2
	case HoldExp:
		return h.Mean
	}
	return h.Min
}

// sample draws a hold time with r.
func (h Hold) sample(r *rand.Rand) time.Duration {
	switch h.Kind {
	case HoldUniform:
		if h.Max == h.Min {
			return h.Min
		}
		return h.Min + time.Duration(r.Int64N(int64(h.Max-h.Min)+1))
	case HoldExp:
		return time.Duration(r.ExpFloat64() * float64(h.Mean))
	}
	return h.Min
}

// parseDuration accepts Go durations and a bare "0".
func parseDuration(s string) (time.Duration, error) {
	if s == "0" {
		return 0, nil
	}
	return time.ParseDuration(s)
}

// Report describes the configuration as the report shows it.
func (c *Config) Report() report.Config {
	return report.Config{
		Strategies:       c.Strategies,
		Workers:          c.Workers,
		Rate:             c.Rate,
		MaxInflight:      c.MaxInflight,
		Keys:             c.Keys,
		KeyDist:          c.KeyDist.String(),
		Hold:             c.Hold.String(),
		Reentry:          c.Reentry,
		DurationS:        c.Duration.Seconds(),
		WarmupS:          c.warmup().Seconds(),
		AcquireTimeoutMS: c.AcquireTimeout.Milliseconds(),
		TTLMS:            c.TTL.Milliseconds(),
		Watchdog:         c.Watchdog.String(),
		Wait:             c.Wait.String(),
		Faults:           c.Faults,
		OnLost:           c.onLostReport(),
		ReadRatio:        c.ReadRatio,
		Permits:          omitOne(c.Permits),
		LockSet:          omitOne(c.LockSet),
	}
}

// omitOne is n for the report, 0 (omitted) at its default of 1.
func omitOne(n int) int {
	if n == 1 {
		return 0
	}
	return n
}

// onLostReport is the --on-lost setting for the report: "" for the default.
func (c *Config) onLostReport() string {
	if c.OnLost == OnLostContinue {
		return ""
	}
	return c.OnLost.String()
}
