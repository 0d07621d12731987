package strategies

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/rueidis"

	"github.com/lockbench/lockbench/internal/usage"
)

// Options are what a Strategy is built with: its lock parameters (Params, which Settle
// defaults and checks) and the connection and hooks it runs with. New settles Params unless
// Settle already did, and checks the connection; anything it cannot use is an *OptionError
// naming the field.
type Options struct {
	// Params are the lock parameters: ttl, watchdog, wait, ... (a phase's).
	Params

	// Client reaches the Redis that holds the locks. Required by every strategy but redlock.
	// It belongs to the caller: strategies never close it.
	Client rueidis.Client

	// Nodes are redlock's independent masters: an odd number, at least 3. Only redlock reads
	// it; a redlock strategy with no Nodes is an error.
	Nodes []rueidis.Client

	// Clock is read by the strategies that compare timestamps (getset, setnx-stale) and by
	// redlock's validity check. Default time.Now. A per-call clock set with WithClock wins.
	Clock func() time.Time

	// Permits is how many holders one key of a semaphore admits (semaphore,
	// expirable-semaphore): the count a process sets, with Redisson's trySetPermits, the
	// first time it uses a key; a key already set keeps its count. Default 1 (a semaphore of
	// one permit excludes like a mutex); must be >= 1. The other strategies ignore it. It is
	// the phase's load (workload.Load.Permits), which the engine hands over.
	Permits int

	// Hooks are the points where the fault layer steps in. Nil hooks are skipped.
	Hooks Hooks

	// Connect and NodeConnect say how Client and each of Nodes were made, for strategies
	// that open connections of their own to the same servers: the library adapters, which
	// drive their library's client. The strategies of this package never read them.
	Connect     rueidis.ClientOption
	NodeConnect []rueidis.ClientOption

	// Service is the connection to a lock service other than Redis (Info.Service), as the
	// package that registered the strategy defines it; nil for Redis strategies.
	Service any
}

// Params are a lock's parameters, as a phase sets them for its strategy (--ttl, --watchdog,
// --wait, --wait-replicas) and redlock's tunings. The zero value is every default. Settle
// defaults and checks them for one strategy and makes what the hot path sends (the ttl in
// milliseconds, as a script argument) once; New takes settled Params as they are.
type Params struct {
	// TTL is the lease time the lock service keeps a lock for (the stale-after time of the
	// timestamp strategies): a duration of at least 1ms, NoTTL for a strategy whose
	// Info.NoTTL says it can run without one, or, the zero value, nobody's choice: DefaultTTL,
	// or a strategy's own default lease (the Redisson family runs as Redisson's lock(): a
	// 30s lease renewed every 10s; see LeaseReporter).
	TTL TTL

	// Watchdog renews held leases while they are held. Zero = off (the default). Only the
	// strategies whose Info().AutoRenew is true accept it. See ParseWatchdog.
	Watchdog Watchdog

	// Wait is how a blocked acquirer waits. The zero value is the default, native: each
	// strategy waits as its source does (Info.NativeWait). See ParseWait.
	Wait Wait

	// WaitReplicas, when > 0, makes an acquire wait until that many replicas have the lock
	// (Redis WAIT, as Redisson checks by default), so that a failover right after the grant
	// cannot lose it. A grant the replicas do not confirm within ReplicaTimeout is given back
	// and counts as a failed attempt (and in Stats.Unreplicated): the acquire goes on
	// waiting, and times out while no replica answers. Single-node strategies with a ttl'd
	// lease only (those with AutoRenew). Default 0.
	WaitReplicas int
	// ReplicaTimeout bounds the WAIT. Default 1s.
	ReplicaTimeout time.Duration

	// DriftFactor is redlock's clock drift allowance: a lock is valid for
	// ttl - elapsed - (ttl*DriftFactor + 2ms). Default 0.01; must be in [0, 1).
	DriftFactor float64

	// NodeTimeout bounds each redlock request to one node, so a dead or paused node costs at
	// most this much per attempt. Default ttl/20 clamped to [5ms, 500ms].
	NodeTimeout time.Duration

	// settled is what Settle made of these Params for a strategy; New uses it while the
	// Params it was made from are unchanged.
	settled *settled
}

// Hooks are fault-injection points. They run on the hot path only when set.
type Hooks struct {
	// AfterSetNX runs in setnx-expire after its SETNX won and before its EXPIRE. Returning
	// an error simulates the client dying right there: EXPIRE is never sent, the key stays
	// without a ttl (seed 003's deadlock) and Acquire returns an error wrapping ErrCrashed.
	AfterSetNX func(ctx context.Context, key, owner string) error

	// BeforeRenew runs before every watchdog renewal of owner's lease on key. Blocking in it
	// freezes that renewal, which is what a stop-the-world pause does to a whole client.
	BeforeRenew func(ctx context.Context, key, owner string)

	// ReleasePause runs inside every release of owner's lease on key: for get-del between
	// its GET and its DEL (the check-then-delete window of seeds 003/004), and only when the
	// GET found the lock still ours — otherwise there is no DEL to stall; for every other
	// strategy before the release's first command, once its watchdog has stopped. A
	// reentrant-local release that only lowers the local count talks to no Redis and runs no
	// hook. Blocking in it stalls the release there, as a GC pause between two commands would.
	ReleasePause func(ctx context.Context, key, owner string)

	// OnPause is for a strategy whose client is a process of its own (driver:CMD), which no
	// hook inside a Go call can freeze: the strategy calls it once when built, with freeze,
	// and every stop-the-world pause of a holder (process-pause) then calls freeze as it
	// begins and the thaw freeze returned as it ends. Pauses overlap: freeze counts them.
	OnPause func(freeze func() (thaw func()))
}

// OptionError reports an option or argument the strategies cannot use.
type OptionError struct {
	Field  string // the option, spelled as the CLI flag: "ttl", "watchdog", "wait", ...
	Value  string // the value given
	Reason string // what is wrong with it, including the valid values
}

// ExitCode is usage.ExitCode: the caller's input is wrong, as a command line reports it.
func (e *OptionError) ExitCode() int { return usage.ExitCode }

func (e *OptionError) Error() string {
	return fmt.Sprintf("invalid %s %q: %s", e.Field, e.Value, e.Reason)
}

// Watchdog is the renewal interval setting: off, auto (ttl/3, as Redisson renews its 30s
// lease every 10s) or a fixed interval.
type Watchdog struct {
	Auto     bool
	Interval time.Duration // used when Auto is false; 0 = off
}

// Enabled reports whether renewal is on.
func (w Watchdog) Enabled() bool { return w.Auto || w.Interval > 0 }

// Resolve returns the renewal interval for ttl, 0 when off.
func (w Watchdog) Resolve(ttl time.Duration) time.Duration {
	if w.Auto {
		return ttl / 3
	}
	return w.Interval
}

func (w Watchdog) String() string {
	switch {
	case w.Auto:
		return "auto"
	case w.Interval > 0:
		return w.Interval.String()
	}
	return "off"
}

// Set parses s into w; with String and Type it makes Watchdog a pflag.Value.
func (w *Watchdog) Set(s string) error {
	v, err := ParseWatchdog(s)
	if err != nil {
		return reasonOnly(err) // the flag parser names the flag itself
	}
	*w = v
	return nil
}

// Type names the value in --help.
func (*Watchdog) Type() string { return "off|auto|DUR" }

// ParseWatchdog reads "off", "auto" or a Go duration such as "3s".
func ParseWatchdog(s string) (Watchdog, error) {
	switch s {
	case "", "off":
		return Watchdog{}, nil
	case "auto":
		return Watchdog{Auto: true}, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return Watchdog{}, &OptionError{Field: "watchdog", Value: s,
			Reason: "valid: off, auto (= ttl/3), or a positive duration such as 3s"}
	}
	return Watchdog{Interval: d}, nil
}

// WaitKind selects a wait policy.
type WaitKind int

const (
	// WaitNative waits as the strategy's source does (Info.NativeWait): the article's loop,
	// Redisson's own wait, a library's. The zero value, and the default. The other kinds are
	// lockbench's what-ifs: what a better client-side wait would buy.
	WaitNative WaitKind = iota
	// WaitBackoff sleeps a jittered, doubling interval between attempts.
	WaitBackoff
	// WaitSpin retries at a fixed interval.
	WaitSpin
	// WaitPubSub is lockbench's scheduler (notify.go): a local FIFO per lock, a release
	// announced to the process whose turn it is, which wakes exactly one of its waiters, and
	// for token a hand-off inside the release script. No article or library waits this way.
	WaitPubSub
)

// Wait is a wait policy.
type Wait struct {
	Kind WaitKind
	// Interval between spin attempts; 0 retries at once.
	Interval time.Duration
	// Min and Max bound the backoff sleep: the n-th retry sleeps a random time in
	// [d/2, d] with d = min(Max, Min*2^n). Zero values mean 1ms and 50ms.
	Min, Max time.Duration
}

const (
	defaultSpin       = time.Millisecond
	defaultBackoffMin = time.Millisecond
	defaultBackoffMax = 50 * time.Millisecond
)

func (w Wait) String() string {
	switch w.Kind {
	case WaitNative:
		return "native"
	case WaitSpin:
		return "spin:" + w.Interval.String()
	case WaitPubSub:
		return "pubsub"
	}
	w = w.withDefaults()
	return "backoff:" + w.Min.String() + ".." + w.Max.String()
}

func (w Wait) withDefaults() Wait {
	if w.Kind == WaitBackoff {
		if w.Min == 0 {
			w.Min = defaultBackoffMin
		}
		if w.Max == 0 {
			w.Max = max(defaultBackoffMax, w.Min)
		}
	}
	return w
}

const waitForms = "valid: native (the default: each lock's own wait), or lockbench's what-ifs spin[:INTERVAL] (default 1ms), backoff[:MIN..MAX] (default 1ms..50ms), pubsub"

// Set parses s into w; with String and Type it makes Wait a pflag.Value.
func (w *Wait) Set(s string) error {
	v, err := ParseWait(s)
	if err != nil {
		return reasonOnly(err)
	}
	*w = v
	return nil
}

// Type names the value in --help.
func (*Wait) Type() string { return "policy" }

// reasonOnly drops the field and value from an OptionError, for parsers that name them.
func reasonOnly(err error) error {
	if oe, ok := err.(*OptionError); ok {
		return errors.New(oe.Reason)
	}
	return err
}

// ParseWait reads "native" (or "", the default), "spin", "spin:5ms", "backoff",
// "backoff:1ms..100ms" or "pubsub".
func ParseWait(s string) (Wait, error) {
	bad := func(reason string) (Wait, error) {
		if reason != "" {
			reason += "; "
		}
		return Wait{}, &OptionError{Field: "wait", Value: s, Reason: reason + waitForms}
	}
	name, arg, hasArg := strings.Cut(s, ":")
	switch name {
	case "", "native":
		if hasArg {
			return bad("native takes no argument")
		}
		return Wait{}, nil
	case "pubsub":
		if hasArg {
			return bad("pubsub takes no argument")
		}
		return Wait{Kind: WaitPubSub}, nil
	case "spin":
		w := Wait{Kind: WaitSpin, Interval: defaultSpin}
		if hasArg {
			d, err := time.ParseDuration(arg)
			if err != nil || d < 0 {
				return bad("spin interval must be a duration >= 0")
			}
			w.Interval = d
		}
		return w, nil
	case "backoff":
		w := Wait{Kind: WaitBackoff, Min: defaultBackoffMin, Max: defaultBackoffMax}
		if hasArg {
			lo, hi, ok := strings.Cut(arg, "..")
			if !ok {
				return bad("backoff needs MIN..MAX")
			}
			var err1, err2 error
			w.Min, err1 = time.ParseDuration(lo)
			w.Max, err2 = time.ParseDuration(hi)
			if err1 != nil || err2 != nil || w.Min <= 0 || w.Max < w.Min {
				return bad("backoff needs 0 < MIN <= MAX")
			}
		}
		return w, nil
	}
	return bad("unknown policy " + fmt.Sprintf("%q", name))
}

type clockKey struct{}

// WithClock returns a context whose acquires read now from clock instead of Options.Clock;
// the fault layer gives a skewed clock to some workers this way.
func WithClock(ctx context.Context, clock func() time.Time) context.Context {
	return context.WithValue(ctx, clockKey{}, clock)
}

// resolved is Options after defaults and validation, with the values the hot path needs
// made once (settled: the lease, its milliseconds and script argument).
type resolved struct {
	Options
	settled
}

// Check validates the options that do not depend on a server (ttl, watchdog, wait, drift)
// for the named strategy, without building it. It is Settle for callers that do not keep
// the settled Params.
func Check(name string, o Options) error {
	_, err := Settle(name, o.Params)
	return err
}

// Settle fills the defaults of p and checks them against the named strategy, and makes the
// lease's milliseconds and script arguments: the one place a lock parameter is defaulted
// and checked. A run settles every phase's Params before it connects anywhere; New takes
// the settled Params as they are. An unknown name or an unusable value is an
// *OptionError naming the field as the CLI flag. Params already settled for the strategy,
// and unchanged since, are returned as they are.
func Settle(name string, p Params) (Params, error) {
	if p.isSettled(name) {
		return p, nil
	}
	info, ok := Lookup(name)
	if !ok {
		return p, unknownStrategy(name)
	}
	return settle(info, p)
}

func settle(info Info, p Params) (Params, error) {
	p.settled = nil
	s := &settled{name: info.Name, from: p}
	if err := CheckTTL(p.TTL); err != nil {
		return p, err
	}
	if t := p.TTL; t.None() {
		if err := checkNoTTL(info, p); err != nil {
			return p, err
		}
		s.setLease(t, DefaultTTL)
	} else if own := info.OwnLease; own > 0 && !t.Chosen() && !p.Watchdog.Enabled() {
		s.setLease(TTLOf(own), own) // the strategy's own default, in place of DefaultTTL
		s.renewal = own / 3
	} else {
		s.setLease(t, t.Duration())
	}
	if p.Watchdog.Enabled() {
		if !info.AutoRenew {
			return p, &OptionError{Field: "watchdog", Value: p.Watchdog.String(),
				Reason: fmt.Sprintf("strategy %s cannot renew a lease; use off, or one of: %s", info.Name, strings.Join(renewable(), ", "))}
		}
		s.renewal = p.Watchdog.Resolve(s.ttl)
		if s.renewal >= s.ttl || s.renewal <= 0 {
			return p, &OptionError{Field: "watchdog", Value: p.Watchdog.String(),
				Reason: fmt.Sprintf("the renewal interval must be shorter than the ttl (%s); valid: off, auto (= ttl/3), or a duration below the ttl", s.ttl)}
		}
	}
	switch p.Wait.Kind {
	case WaitNative: // the strategy's own (base.policy)
	case WaitSpin:
		if p.Wait.Interval < 0 {
			return p, &OptionError{Field: "wait", Value: p.Wait.String(), Reason: "spin interval must be >= 0; " + waitForms}
		}
	case WaitBackoff:
		p.Wait = p.Wait.withDefaults()
		if p.Wait.Min <= 0 || p.Wait.Max < p.Wait.Min {
			return p, &OptionError{Field: "wait", Value: p.Wait.String(), Reason: "backoff needs 0 < MIN <= MAX; " + waitForms}
		}
	case WaitPubSub:
	default:
		return p, &OptionError{Field: "wait", Value: fmt.Sprint(int(p.Wait.Kind)), Reason: "unknown policy; " + waitForms}
	}
	if p.WaitReplicas < 0 {
		return p, &OptionError{Field: "wait-replicas", Value: fmt.Sprint(p.WaitReplicas), Reason: "must be >= 0"}
	}
	if p.WaitReplicas > 0 && (!info.AutoRenew || info.MultiNode) {
		return p, &OptionError{Field: "wait-replicas", Value: fmt.Sprint(p.WaitReplicas),
			Reason: fmt.Sprintf("strategy %s has no ttl'd single-node lease to wait for; valid for: %s", info.Name, strings.Join(renewable(), ", "))}
	}
	if p.ReplicaTimeout == 0 {
		p.ReplicaTimeout = time.Second
	}
	if p.DriftFactor == 0 {
		p.DriftFactor = 0.01
	}
	if p.DriftFactor < 0 || p.DriftFactor >= 1 {
		return p, &OptionError{Field: "drift-factor", Value: fmt.Sprint(p.DriftFactor), Reason: "must be in [0, 1); default 0.01"}
	}
	if p.NodeTimeout == 0 {
		p.NodeTimeout = min(max(s.ttl/20, 5*time.Millisecond), 500*time.Millisecond)
	}
	if p.NodeTimeout < 0 {
		return p, &OptionError{Field: "node-timeout", Value: p.NodeTimeout.String(), Reason: "must be > 0"}
	}
	s.from = p
	p.settled = s
	return p, nil
}

// checkNoTTL refuses a lock without a ttl (NoTTL) to a strategy that needs one, and a
// watchdog with it.
func checkNoTTL(info Info, p Params) error {
	if !info.NoTTL {
		var takers []string
		for _, i := range Catalog() {
			if i.NoTTL {
				takers = append(takers, i.Name)
			}
		}
		return &OptionError{Field: "ttl", Value: "0",
			Reason: fmt.Sprintf("%s needs a ttl: want a duration of at least 1ms, e.g. 10s; only %s runs without one", info.Name, strings.Join(takers, ", "))}
	}
	if p.Watchdog.Enabled() {
		return &OptionError{Field: "watchdog", Value: p.Watchdog.String(), Reason: "a watchdog renews a ttl, and --ttl 0 sets none; use off"}
	}
	return nil
}

// resolve settles o's Params for info, unless Settle did already for these Params, and
// checks the rest of o: what the strategy is built with.
func resolve(info Info, o Options) (*resolved, error) {
	if !o.Params.isSettled(info.Name) {
		p, err := settle(info, o.Params)
		if err != nil {
			return nil, err
		}
		o.Params = p
	}
	r := &resolved{Options: o, settled: *o.settled}
	if o.Clock == nil {
		r.Clock = time.Now
	}
	if o.Permits == 0 {
		r.Permits = 1
	}
	if r.Permits < 1 {
		return nil, &OptionError{Field: "permits", Value: fmt.Sprint(o.Permits), Reason: "must be at least 1 (the holders a semaphore key admits); default 1"}
	}
	if info.Service != "" {
		return r, nil // the registering package checks its own connection
	}
	return r, r.resolveTarget(info)
}

// isSettled reports whether p were settled for the strategy named name and are unchanged
// since.
func (p Params) isSettled(name string) bool {
	s := p.settled
	p.settled = nil
	return s != nil && s.name == name && p == s.from
}

// resolveTarget checks the clients the strategy needs.
func (r *resolved) resolveTarget(info Info) error {
	o := r.Options
	if info.MultiNode {
		if n := len(o.Nodes); n < 3 || n%2 == 0 {
			return &OptionError{Field: "nodes", Value: fmt.Sprint(n),
				Reason: "redlock needs an odd number of independent masters, at least 3 (e.g. 3 or 5)"}
		}
		for i, c := range o.Nodes {
			if c == nil {
				return &OptionError{Field: "nodes", Value: fmt.Sprint(i), Reason: "node client is nil"}
			}
		}
	} else if o.Client == nil {
		return &OptionError{Field: "client", Value: "nil", Reason: "strategy " + info.Name + " needs a Redis client"}
	}
	return nil
}

// now reads the clock for this call: WithClock's if set, else Options.Clock.
func (r *resolved) now(ctx context.Context) time.Time {
	if c, ok := ctx.Value(clockKey{}).(func() time.Time); ok {
		return c()
	}
	return r.Clock()
}

func checkKey(key string) error {
	if key == "" {
		return &OptionError{Field: "key", Value: key, Reason: "must not be empty"}
	}
	return nil
}
