package libs

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/lockbench/lockbench/strategies"
)

// common is what the adapters share: the catalog entry, the resolved options they read and
// the counters behind Stats.
type common struct {
	info    strategies.Info
	ttl     time.Duration
	renewal time.Duration // lockbench's watchdog interval; 0 = off
	hooks   strategies.Hooks

	renewals, renewFailures, failedAttempts atomic.Uint64
}

func newCommon(info strategies.Info, o strategies.Options) common {
	return common{info: info, ttl: o.TTL.Duration(), renewal: o.Watchdog.Resolve(o.TTL.Duration()), hooks: o.Hooks}
}

func (c *common) Info() strategies.Info { return c.info }

func (c *common) Stats() strategies.Stats {
	return strategies.Stats{
		Renewals:       c.renewals.Load(),
		RenewFailures:  c.renewFailures.Load(),
		FailedAttempts: c.failedAttempts.Load(),
	}
}

// checkKey refuses an empty key, as the lock core does.
func checkKey(key string) error {
	if key == "" {
		return &strategies.OptionError{Field: "key", Value: key, Reason: "must not be empty"}
	}
	return nil
}

// notAcquired is the error of an acquire that gave up: the context ended (cause), or the
// library stopped trying by its own rule (cause is the library's error).
func notAcquired(key string, cause error) error {
	return fmt.Errorf("%w: key %s: %w", strategies.ErrNotAcquired, key, cause)
}

// acquireErr maps an error of a library's acquire: once ctx has ended, whatever the library
// says (redsync: ErrFailed; a command cut by the deadline) is the wait ending, not a failure.
func (c *common) acquireErr(ctx context.Context, key string, err error) error {
	if ctx.Err() != nil {
		return notAcquired(key, ctx.Err())
	}
	return fmt.Errorf("%s: key %s: %w", c.info.Name, key, err)
}

// libLease is the Redis side of a redsync or redislock lease.
type libLease interface {
	// release gives the lock up; an error wrapping strategies.ErrNotOwner when the library
	// says it was no longer ours.
	release(ctx context.Context) error
	// renew extends the lease through the library (Extend, Refresh) and returns how long the
	// library says it is valid from now on; ok false (with a nil error) when the library says
	// it is no longer ours. sent is when the renewal was sent.
	renew(ctx context.Context, sent time.Time) (until time.Time, ok bool, err error)
}

// lease is a held redsync or redislock lock, with lockbench's watchdog when --watchdog is on
// (the libraries extend only when asked: Extend, Refresh).
type lease struct {
	c          *common
	ops        libLease
	key, owner string
	released   atomic.Bool
	until      atomic.Int64 // ValidUntil, ns since the Unix epoch
	dog        *watchdog    // nil when --watchdog is off
}

func (c *common) newLease(ops libLease, key, owner string, until time.Time) *lease {
	l := &lease{c: c, ops: ops, key: key, owner: owner}
	l.until.Store(until.UnixNano())
	if c.renewal > 0 {
		l.dog = startWatchdog(l)
	}
	return l
}

// Release stops the watchdog, runs the ReleasePause hook, then the library's release — the
// lock core's order (see strategies.Lease): nothing extends the lease during the pause.
func (l *lease) Release(ctx context.Context) error {
	if !l.released.CompareAndSwap(false, true) {
		return fmt.Errorf("%w: key %s", strategies.ErrReleased, l.key)
	}
	if l.dog != nil {
		l.dog.stop()
	}
	if pause := l.c.hooks.ReleasePause; pause != nil {
		pause(ctx, l.key, l.owner)
	}
	if err := l.ops.release(ctx); err != nil {
		return fmt.Errorf("%s: release key %s: %w", l.c.info.Name, l.key, err)
	}
	return nil
}

// Fence is 0: none of the libraries issues a fencing token.
func (l *lease) Fence() uint64 { return 0 }

// Lost is closed when the watchdog found the lease gone; nil without a watchdog.
func (l *lease) Lost() <-chan struct{} {
	if l.dog == nil {
		return nil
	}
	return l.dog.lost
}

// ValidUntil is the earliest the lease can expire, by the library's reckoning: redsync's
// Until (the expiry less its drift allowance, from the start of the attempt that took it),
// redislock's ttl from the start of that attempt (see attempts); each renewal that got
// through moves it. --on-lost abort and the oracle's misdelete check read it.
func (l *lease) ValidUntil() time.Time { return time.Unix(0, l.until.Load()) }

// watchdog renews one lease every interval until it is released, as the lock core's does:
// a renewal the library refuses, or renewals failing for a whole ttl since the last one that
// got through, mark the lease lost. Before each renewal it runs the BeforeRenew hook, where a
// process pause freezes it.
type watchdog struct {
	cancel context.CancelFunc
	done   chan struct{} // closed when the renewal goroutine has exited
	lost   chan struct{} // closed when the lease is lost
}

func startWatchdog(l *lease) *watchdog {
	ctx, cancel := context.WithCancel(context.Background())
	d := &watchdog{cancel: cancel, done: make(chan struct{}), lost: make(chan struct{})}
	go d.run(ctx, l)
	return d
}

// stop ends renewal and waits for a renewal in flight: the library's lock object is not
// safe for concurrent use (redsync's Mutex writes its validity on Extend), and a renewal
// racing the release could be mistaken for a loss.
func (d *watchdog) stop() {
	d.cancel()
	<-d.done
}

func (d *watchdog) run(ctx context.Context, l *lease) {
	defer close(d.done)
	c := l.c
	interval := c.renewal
	validFrom := time.Now()
	t := time.NewTimer(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if hook := c.hooks.BeforeRenew; hook != nil {
			hook(ctx, l.key, l.owner)
		}
		sent := time.Now()
		rctx, cancel := context.WithTimeout(ctx, interval)
		until, ok, err := l.ops.renew(rctx, sent)
		cancel()
		if ctx.Err() != nil {
			return // released meanwhile
		}
		switch {
		case err == nil && ok:
			c.renewals.Add(1)
			validFrom = sent
			l.until.Store(until.UnixNano())
		case err == nil || time.Since(validFrom) >= c.ttl:
			c.renewFailures.Add(1)
			close(d.lost)
			return
		}
		t.Reset(interval)
	}
}

// errNotOwner wraps a library's own "not held" error with strategies.ErrNotOwner.
func errNotOwner(libErr error) error {
	if libErr == nil {
		libErr = errors.New("the library reports the lock gone")
	}
	return fmt.Errorf("%w: %w", strategies.ErrNotOwner, libErr)
}
