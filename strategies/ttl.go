package strategies

import (
	"strconv"
	"time"
)

// TTL is a lock's lease time (Params.TTL): a duration, none (NoTTL: the lock never
// expires), or, the zero value, nobody's choice (DefaultTTL, or a strategy's own default
// lease). It is a pflag.Value: the command line writes a duration, and 0 for none.
type TTL struct {
	d    time.Duration // the chosen lease; 0 when nobody chose one or none was chosen
	none bool
}

// NoTTL asks for a lock key that never expires: seed 003's lock as it stood before it
// added EXPIRE. Only the strategies whose Info.NoTTL is true take it (setnx-expire),
// without a watchdog; a holder that dies then keeps its lock for good, which the oracle's
// verdict reports as a DEADLOCK. The command line spells it --ttl 0.
var NoTTL = TTL{none: true}

// TTLOf is the lease d, chosen. Settle refuses one shorter than a millisecond.
func TTLOf(d time.Duration) TTL { return TTL{d: d} }

// DefaultTTL is the lease time when none is chosen: the one default every layer (the
// flags, a profile, the engine, the strategies) falls back to, through TTL.Duration.
const DefaultTTL = 10 * time.Second

// None reports whether t is no ttl at all (NoTTL).
func (t TTL) None() bool { return t.none }

// Chosen reports whether someone chose t (a lease or none); false for the default.
func (t TTL) Chosen() bool { return t != TTL{} }

// Duration is the lease time: the chosen one, DefaultTTL when nobody chose one, 0 for none.
func (t TTL) Duration() time.Duration {
	switch {
	case t.none:
		return 0
	case t.d == 0:
		return DefaultTTL
	}
	return t.d
}

// Milliseconds is the lease in milliseconds, as Redis keeps it and the reports print it
// (0 for none): the one conversion. Settle makes the scripts' argument from it once.
func (t TTL) Milliseconds() int64 { return t.Duration().Milliseconds() }

// String is the lease as the flag prints it: "10s", "0s" for none.
func (t TTL) String() string { return t.Duration().String() }

// Set reads a duration, 0 for none; with String and Type it makes TTL a pflag.Value.
func (t *TTL) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	if d == 0 {
		*t = NoTTL
		return nil
	}
	*t = TTLOf(d)
	return nil
}

// Type names the value in --help, as pflag names a duration.
func (*TTL) Type() string { return "duration" }

// TTLWant is what a valid ttl is, as its error says: "invalid --ttl -1s: want ...".
const TTLWant = "a duration of at least 1ms, e.g. 10s (0 = no ttl, for setnx-expire)"

// CheckTTL is the one check of a ttl by itself, whatever the strategy: a lease of at least
// a millisecond (Redis keeps ttls in milliseconds) or none. Settle makes it of each phase's
// ttl, before it checks the ttl against the strategy (checkNoTTL); the ttl setting makes it
// of a value where it is written (a flag, a profile's key, a sweep's value), so that the
// error names that place. The error is an *OptionError on "ttl".
func CheckTTL(t TTL) error {
	if t.None() || t.Duration() >= time.Millisecond {
		return nil
	}
	return &OptionError{Field: "ttl", Value: t.String(), Reason: "want " + TTLWant}
}

// settled is what Settle made of Params for one strategy: the lease in effect and what
// the hot path sends for it, made once.
type settled struct {
	name   string // the strategy
	from   Params // the Params settled, without their settled
	ttl    time.Duration
	ttlMS  int64
	ttlArg string // ttlMS formatted for script arguments
	// renewal is the watchdog interval, 0 = off.
	renewal time.Duration
	// patience is how long a waiter sleeps at most with no news of the lock, and how long the
	// pubsub wait policy's lists outlive their last use: the ttl, or with NoTTL the default
	// ttl, since no lease then ends by itself. patienceArg is it in ms, as an argument.
	patience    time.Duration
	patienceArg string
}

// setLease makes the lease ttl (and its patience) and its script arguments.
func (s *settled) setLease(ttl TTL, patience time.Duration) {
	s.ttl, s.ttlMS = ttl.Duration(), ttl.Milliseconds()
	s.ttlArg = strconv.FormatInt(s.ttlMS, 10)
	s.patience = patience
	s.patienceArg = strconv.FormatInt(patience.Milliseconds(), 10)
}
