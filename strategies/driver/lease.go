package driver

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lockbench/lockbench/strategies"
)

// lease is a lock the driver granted, known to it by its handle.
type lease struct {
	s          *Strategy
	handle     string
	key, owner string
	fence      uint64
	until      atomic.Int64 // ValidUntil, ns since the Unix epoch; 0 = unknown
	done       atomic.Bool  // released or abandoned
	died       atomic.Bool  // abandoned
	lostOnce   sync.Once
	lost       chan struct{}
	dog        *watchdog // lockbench's renewal (--watchdog), nil when off
}

func (s *Strategy) newLease(r reply, key, owner string, sent time.Time) *lease {
	l := &lease{s: s, handle: r.Lease, key: key, owner: owner, fence: r.Fence, lost: make(chan struct{})}
	if r.ValidMS != nil {
		l.until.Store(sent.Add(time.Duration(*r.ValidMS) * time.Millisecond).UnixNano())
	}
	s.leases.Store(l.handle, l)
	if s.renewal > 0 {
		l.dog = startWatchdog(l)
	}
	return l
}

// Release stops lockbench's renewal, runs the ReleasePause hook, then asks the driver to
// release. The holder has left the oracle's resource before.
func (l *lease) Release(ctx context.Context) error {
	if err := l.end(ctx); err != nil {
		return err
	}
	defer l.s.leases.Delete(l.handle)
	r, err := l.s.call(ctx, request{Type: msgRelease, Lease: l.handle})
	if err != nil {
		return err
	}
	return l.released(r)
}

// ReleaseThen is Release with the worker's next acquire in the same request (a driver that
// supports chain): the driver begins it when the release is done, on its own side, as a
// program that gives the lock back and takes it again does.
func (l *lease) ReleaseThen(ctx context.Context, key, owner string, timeout time.Duration) (strategies.Pending, error) {
	if key == "" {
		return nil, &strategies.OptionError{Field: "key", Value: key, Reason: "must not be empty"}
	}
	if err := l.end(ctx); err != nil {
		return nil, err
	}
	defer l.s.leases.Delete(l.handle)
	timeout = max(timeout, time.Millisecond)
	sent := time.Now()
	r, ac, err := l.s.callThen(ctx, request{Type: msgRelease, Lease: l.handle},
		&request{Type: msgAcquire, Worker: owner, Key: key, TTLMS: l.s.ttlMS, TimeoutMS: timeout.Milliseconds()}, timeout)
	var next strategies.Pending
	if ac != nil {
		next = &pending{s: l.s, c: ac, key: key, owner: owner, sent: sent}
	}
	if err != nil {
		return next, err
	}
	return next, l.released(r)
}

// end ends the lease before its release: a second release is refused, lockbench's renewal
// stops and the ReleasePause hook runs.
func (l *lease) end(ctx context.Context) error {
	if !l.done.CompareAndSwap(false, true) {
		if l.abandoned() {
			return fmt.Errorf("%w: key %s: abandoned (its holder died)", strategies.ErrNotOwner, l.key)
		}
		return fmt.Errorf("%w: key %s", strategies.ErrReleased, l.key)
	}
	if l.dog != nil {
		l.dog.stop()
	}
	if pause := l.s.hooks.ReleasePause; pause != nil {
		pause(ctx, l.key, l.owner)
	}
	return nil
}

// released is the outcome of the driver's reply r to a release.
func (l *lease) released(r reply) error {
	switch r.Type {
	case msgReleased:
		return nil
	case msgNotOwner:
		return fmt.Errorf("%w: key %s: the driver says so", strategies.ErrNotOwner, l.key)
	case msgError:
		return fmt.Errorf("driver %q: release key %s: %s", l.s.p.name, l.key, oneLine(r.Message))
	}
	return l.s.unexpected("release", r)
}

// pending is the acquire a chained release carried.
type pending struct {
	s          *Strategy
	c          *call
	key, owner string
	sent       time.Time // the release that carried it was sent
}

func (p *pending) Wait(ctx context.Context) (strategies.Lease, error) {
	return p.s.granted(ctx, p.c, p.key, p.owner, p.sent, true)
}

func (p *pending) Cancel() { p.s.p.cancel(p.c) }

// abandoned reports whether Abandon gave the lease up.
func (l *lease) abandoned() bool { return l.died.Load() }

// Abandon is the holder's death (holder-crash): the driver forgets the lease without
// releasing it and stops whatever renews it; the lock stays until its ttl frees it.
func (l *lease) Abandon() {
	if !l.done.CompareAndSwap(false, true) {
		return
	}
	l.died.Store(true)
	l.s.leases.Delete(l.handle)
	if l.dog != nil {
		l.dog.stop()
	}
	l.markLost()
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), l.s.p.grace)
		defer cancel()
		_, _ = l.s.call(ctx, request{Type: msgAbandon, Lease: l.handle})
	}()
}

func (l *lease) markLost() { l.lostOnce.Do(func() { close(l.lost) }) }

func (l *lease) Fence() uint64 { return l.fence }

// Lost is closed when the driver reports the lease lost (its library's renewal failed), when
// lockbench's watchdog could not renew it, or when it was abandoned.
func (l *lease) Lost() <-chan struct{} { return l.lost }

// ValidUntil is the driver's valid_ms counted from the acquire's start, moved by each
// extension; zero when the driver gives none (the engine then counts the ttl).
func (l *lease) ValidUntil() time.Time {
	if ns := l.until.Load(); ns != 0 {
		return time.Unix(0, ns)
	}
	return time.Time{}
}

// call sends req and waits for its reply, until ctx ends.
func (s *Strategy) call(ctx context.Context, req request) (reply, error) {
	r, _, err := s.callThen(ctx, req, nil, 0)
	return r, err
}

// callThen sends req carrying then (when not nil, an acquire whose reply is due within
// timeout + Grace) and waits for req's reply, until ctx ends. It returns then's call, for
// its own wait, once the line was sent.
func (s *Strategy) callThen(ctx context.Context, req request, then *request, timeout time.Duration) (reply, *call, error) {
	reqTimeout := time.Duration(0)
	if d, ok := ctx.Deadline(); ok {
		reqTimeout = max(time.Until(d), 0)
	}
	c, tc, err := s.p.sendThen(req, reqTimeout, then, timeout)
	if err != nil {
		return reply{}, nil, err
	}
	r, ok, err := s.p.wait(c, ctx.Done())
	switch {
	case err != nil:
		return reply{}, tc, err
	case !ok:
		return reply{}, tc, fmt.Errorf("driver %q: %s: %w", s.p.name, req.Type, ctx.Err())
	}
	return r, tc, nil
}

// watchdog renews one lease through the driver every interval (--watchdog, for a driver
// that supports renewal), as the lock core's does: BeforeRenew first, where a process-pause
// holds it; a renewal the driver refuses, or failures for a whole ttl, lose the lease.
type watchdog struct {
	cancel context.CancelFunc
	done   chan struct{}
}

func startWatchdog(l *lease) *watchdog {
	ctx, cancel := context.WithCancel(context.Background())
	d := &watchdog{cancel: cancel, done: make(chan struct{})}
	go d.run(ctx, l)
	return d
}

func (d *watchdog) stop() {
	d.cancel()
	<-d.done
}

func (d *watchdog) run(ctx context.Context, l *lease) {
	defer close(d.done)
	s := l.s
	validFrom := time.Now()
	t := time.NewTimer(s.renewal)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if hook := s.hooks.BeforeRenew; hook != nil {
			hook(ctx, l.key, l.owner)
		}
		sent := time.Now()
		rctx, cancel := context.WithTimeout(ctx, s.renewal)
		r, err := s.call(rctx, request{Type: msgRenew, Lease: l.handle, TTLMS: s.ttlMS})
		cancel()
		if ctx.Err() != nil {
			return
		}
		switch {
		case err == nil && r.Type == msgRenewed:
			s.renewals.Add(1)
			validFrom = sent
			valid := s.ttl
			if r.ValidMS != nil {
				valid = time.Duration(*r.ValidMS) * time.Millisecond
			}
			l.until.Store(sent.Add(valid).UnixNano())
		case err == nil && r.Type == msgNotOwner, time.Since(validFrom) >= s.ttl:
			s.renewFailures.Add(1)
			l.markLost()
			return
		}
		t.Reset(s.renewal)
	}
}
