package driver

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/rueidis"

	"github.com/lockbench/lockbench/strategies"
)

func init() {
	strategies.RegisterFamily(strategies.Family{Prefix: "driver", Usage: "driver:CMD", Load: load, Build: build})
}

// probeEnv is set for the driver that load starts to read its hello: it has no Redis to
// reach and should say hello and wait for its stdin to close.
const probeEnv = "LOCKBENCH_DRIVER_PROBE=1"

// load starts the driver once, without a Redis, to read its hello: what it is and what it
// can do make the Info. It measures the protocol's round trip (pings) while at it.
func load(arg string) (strategies.Info, error) {
	name := "driver:" + arg
	bad := func(reason string) error {
		return &strategies.OptionError{Field: "strategy", Value: name, Reason: reason}
	}
	argv := strings.Fields(arg)
	if len(argv) == 0 {
		return strategies.Info{}, bad("needs a command: driver:CMD")
	}
	if _, err := exec.LookPath(argv[0]); err != nil {
		return strategies.Info{}, bad(fmt.Sprintf("cannot run %s: %v", argv[0], errors.Unwrap(err)))
	}
	p, err := start(arg, argv, []string{probeEnv})
	if err != nil {
		return strategies.Info{}, bad(err.Error())
	}
	defer p.close()
	p.run(func(reply) {})
	rtt, err := ping(p, 20)
	if err != nil {
		return strategies.Info{}, bad(err.Error())
	}
	return info(p.hello, arg, rtt), nil
}

// info is the catalog entry of a driver from its hello.
func info(h hello, cmd string, rtt time.Duration) strategies.Info {
	summary := h.Summary
	if summary == "" {
		summary = h.Name
	}
	summary = fmt.Sprintf("%s, driven through the driver protocol by %q (ping round trip p50 %s)", summary, cmd, rtt.Round(time.Microsecond))
	if h.Supports.Chain {
		summary += "; a closed loop's release carries the worker's next acquire, which the driver begins when the release is done (lockbench's chain)"
	}
	applies := []string{"ttl", "acquire-timeout"}
	if h.Supports.Renewal {
		applies = append(applies, "watchdog")
	}
	if h.Supports.Semaphore {
		applies = append(applies, "permits")
	}
	i := strategies.Info{
		Summary:           summary,
		Reentrant:         h.Supports.Reentry,
		AutoRenew:         h.Supports.Renewal,
		Fencing:           h.Supports.Fencing,
		KeyTTL:            true,
		SafeWithoutFaults: true,
		Source:            h.Version,
		Applies:           applies,
		Weakness:          "whatever its library's is: the oracle, the faults and the report judge it as they judge a built-in lock",
	}
	if i.Source == "" {
		i.Source = h.Name + " (its driver names no version)"
	}
	if h.Supports.Semaphore {
		i.Capacity = strategies.CapacitySemaphore
	}
	return i
}

// ping measures the driver's round trip: the median of n pings sent one after another.
func ping(p *process, n int) (time.Duration, error) {
	rtts := make([]time.Duration, 0, n)
	for range n {
		sent := time.Now()
		c, err := p.send(request{Type: msgPing}, 0)
		if err != nil {
			return 0, err
		}
		r, _, err := p.wait(c, nil)
		if err != nil {
			return 0, err
		}
		if r.Type != msgPong {
			return 0, &Error{Driver: p.name, What: fmt.Sprintf("answered ping with %s", quote(r.Raw()))}
		}
		rtts = append(rtts, time.Since(sent))
	}
	slices.Sort(rtts)
	return rtts[len(rtts)/2], nil
}

// Strategy is a lock driven through one driver process.
type Strategy struct {
	info    strategies.Info
	p       *process
	fwds    []*forwarder // the run's own dialing, for the driver's connections
	ttl     time.Duration
	ttlMS   int64 // ttl in ms, as the protocol's requests carry it: converted once
	renewal time.Duration
	hooks   strategies.Hooks
	rtt     time.Duration

	leases sync.Map // lease handle -> *lease, for the driver's events

	renewals, renewFailures, failedAttempts atomic.Uint64
	closeOnce                               sync.Once
}

// build starts the driver of a loaded variant with the run's Redis in its environment.
func build(i strategies.Info, o strategies.Options) (strategies.Strategy, error) {
	arg := strings.TrimPrefix(i.Name, "driver:")
	env, fwds, err := environment(o)
	if err != nil {
		return nil, err
	}
	p, err := start(arg, strings.Fields(arg), env)
	if err != nil {
		closeAll(fwds)
		return nil, err
	}
	s := &Strategy{info: i, p: p, fwds: fwds, ttl: o.TTL.Duration(), ttlMS: o.TTL.Milliseconds(), renewal: o.Watchdog.Resolve(o.TTL.Duration()), hooks: o.Hooks}
	p.run(s.event)
	if s.rtt, err = ping(p, 5); err != nil {
		s.Close()
		return nil, err
	}
	if o.Hooks.OnPause != nil {
		o.Hooks.OnPause(p.freeze)
	}
	return s, nil
}

// environment is how a driver reaches the run's Redis: its address, credentials and
// database, in LOCKBENCH_* variables (never on its command line, where ps shows them).
//
// When the run dials through a function of its own (the fault layer's proxies for latency
// and partition), a single server and redlock's masters are reached through forwarders
// that dial the same way, TLS included: the driver then speaks plain Redis protocol to a
// loopback address, and the faults reach its connections too.
func environment(o strategies.Options) ([]string, []*forwarder, error) {
	c := o.Connect
	if len(c.InitAddress) == 0 {
		return nil, nil, &strategies.OptionError{Field: "redis", Value: "", Reason: "the run's Redis address is unknown (Options.Connect has no InitAddress)"}
	}
	cluster := o.Client != nil && o.Client.Mode() == rueidis.ClientModeCluster
	var fwds []*forwarder
	via := func(co rueidis.ClientOption, addr string) (string, error) {
		if co.DialCtxFn == nil || cluster || co.Sentinel.MasterSet != "" {
			return addr, nil // those learn more addresses from the servers: dialed directly
		}
		f, err := forward(co, addr)
		if err != nil {
			return "", err
		}
		fwds = append(fwds, f)
		return f.addr(), nil
	}
	addrs := slices.Clone(c.InitAddress)
	var err error
	if addrs[0], err = via(c, addrs[0]); err != nil {
		return nil, nil, err
	}
	forwarded := addrs[0] != c.InitAddress[0]
	env := []string{
		"LOCKBENCH_REDIS_ADDR=" + addrs[0],
		"LOCKBENCH_REDIS_ADDRS=" + strings.Join(addrs, ","),
		"LOCKBENCH_REDIS_DB=" + strconv.Itoa(c.SelectDB),
		"LOCKBENCH_PERMITS=" + strconv.Itoa(max(o.Permits, 1)),
		"LOCKBENCH_TTL_MS=" + strconv.FormatInt(o.TTL.Milliseconds(), 10), // the same ms as ttlMS
	}
	if c.Username != "" {
		env = append(env, "LOCKBENCH_REDIS_USERNAME="+c.Username)
	}
	if c.Password != "" {
		env = append(env, "LOCKBENCH_REDIS_PASSWORD="+c.Password)
	}
	if c.TLSConfig != nil && !forwarded {
		env = append(env, "LOCKBENCH_REDIS_TLS=1")
	}
	if c.Sentinel.MasterSet != "" {
		env = append(env, "LOCKBENCH_REDIS_MASTER_SET="+c.Sentinel.MasterSet)
	}
	if cluster {
		env = append(env, "LOCKBENCH_REDIS_CLUSTER=1")
	}
	var nodes []string
	for _, n := range o.NodeConnect {
		for _, a := range n.InitAddress {
			a, err := via(n, a)
			if err != nil {
				closeAll(fwds)
				return nil, nil, err
			}
			nodes = append(nodes, a)
		}
	}
	if len(nodes) > 0 {
		env = append(env, "LOCKBENCH_REDIS_NODES="+strings.Join(nodes, ","))
	}
	return env, fwds, nil
}

func closeAll(fwds []*forwarder) {
	for _, f := range fwds {
		f.close()
	}
}

func (s *Strategy) Info() strategies.Info { return s.info }

func (s *Strategy) Stats() strategies.Stats {
	return strategies.Stats{
		Renewals:       s.renewals.Load(),
		RenewFailures:  s.renewFailures.Load(),
		FailedAttempts: s.failedAttempts.Load(),
	}
}

// RoundTrip is the median round trip of a ping to the driver, measured when it started: the
// protocol's own cost per request, which every acquire and release pays on top of the lock.
func (s *Strategy) RoundTrip() time.Duration { return s.rtt }

// Close ends the driver and its process group.
func (s *Strategy) Close() error {
	s.closeOnce.Do(func() {
		s.p.close()
		closeAll(s.fwds)
	})
	return nil
}

// noDeadline is the timeout an acquire whose context has no deadline asks for.
const noDeadline = time.Minute

// Acquire asks the driver for key on behalf of owner, who enters the oracle's resource once
// the driver said granted. The driver waits as its library does, up to timeout_ms: the
// remaining time of ctx.
func (s *Strategy) Acquire(ctx context.Context, key, owner string) (strategies.Lease, error) {
	if key == "" {
		return nil, &strategies.OptionError{Field: "key", Value: key, Reason: "must not be empty"}
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%w: key %s: %w", strategies.ErrNotAcquired, key, err)
	}
	timeout := noDeadline
	if d, ok := ctx.Deadline(); ok {
		timeout = max(time.Until(d), time.Millisecond)
	}
	sent := time.Now()
	c, err := s.p.send(request{Type: msgAcquire, Worker: owner, Key: key, TTLMS: s.ttlMS, TimeoutMS: timeout.Milliseconds()}, timeout)
	if err != nil {
		return nil, err
	}
	return s.granted(ctx, c, key, owner, sent, false)
}

// granted waits for the reply to the acquire of c, sent at sent, until ctx ends. A chained
// acquire's lease counts its validity from sent whatever the driver says: it began after.
func (s *Strategy) granted(ctx context.Context, c *call, key, owner string, sent time.Time, chained bool) (strategies.Lease, error) {
	r, ok, err := s.p.wait(c, ctx.Done())
	switch {
	case err != nil:
		return nil, err
	case !ok:
		return nil, fmt.Errorf("%w: key %s: %w", strategies.ErrNotAcquired, key, ctx.Err())
	}
	switch r.Type {
	case msgGranted:
		l := s.newLease(r, key, owner, sent)
		if chained && r.ValidMS == nil {
			l.until.Store(sent.Add(s.ttl).UnixNano())
		}
		return l, nil
	case msgTimeout:
		s.failedAttempts.Add(1)
		return nil, fmt.Errorf("%w: key %s: the driver timed out", strategies.ErrNotAcquired, key)
	case msgError:
		return nil, fmt.Errorf("driver %q: acquire key %s: %s", s.p.name, key, oneLine(r.Message))
	}
	return nil, s.unexpected("acquire", r)
}

// Chains reports whether the driver said it supports chain: its leases' ReleaseThen then
// carries the next acquire in the release's request.
func (s *Strategy) Chains() bool { return s.p.hello.Supports.Chain }

// unexpected breaks the driver that answered a request with a reply of another request.
func (s *Strategy) unexpected(req string, r reply) error {
	err := &Error{Driver: s.p.name, What: fmt.Sprintf("answered %s with %s", req, quote(r.Raw()))}
	s.p.fail(err)
	return err
}

// event handles the driver's events: a lease its library lost, or extended.
func (s *Strategy) event(r reply) {
	v, ok := s.leases.Load(r.Lease)
	if !ok {
		return // released meanwhile
	}
	l := v.(*lease)
	switch r.Type {
	case msgLost:
		s.renewFailures.Add(1)
		l.markLost()
	case msgExtended:
		s.renewals.Add(1)
		if r.ValidMS != nil {
			l.until.Store(time.Now().Add(time.Duration(*r.ValidMS) * time.Millisecond).UnixNano())
		}
	}
}

func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	if s == "" {
		s = "(no message)"
	}
	return s
}
