package strategies

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/redis/rueidis"
)

// base is what every strategy shares: resolved options, counters, and for the pubsub wait
// policy the process's subscription to release announcements.
type base struct {
	info   Info
	o      *resolved
	notify *notifier // nil unless the wait policy is pubsub

	// releasePause is Hooks.ReleasePause as the common release runs it, before the release's
	// first command (lease.Release, redlockLease.Release). get-del clears it: its pause
	// belongs between its GET and its DEL, where it runs the hook itself.
	releasePause func(ctx context.Context, key, owner string)
	// delayedRetry: an attempt's retryIn is a random delay that every wait policy waits on
	// top of its own pause before the next attempt (redlock after a split vote; see pause),
	// rather than, as for the others, how long the holder's lease still runs, which only
	// bounds a pubsub waiter's sleep.
	delayedRetry bool

	renewals, renewFailures, failedAttempts, unreplicated atomic.Uint64
}

func newBase(info Info, o *resolved, notifyVia rueidis.Client) (*base, error) {
	b := &base{info: info, o: o, releasePause: o.Hooks.ReleasePause}
	if o.Wait.Kind == WaitPubSub {
		n, err := newNotifier(notifyVia)
		if err != nil {
			return nil, err
		}
		b.notify = n
	}
	return b, nil
}

func (b *base) Info() Info { return b.info }

func (b *base) Stats() Stats {
	s := Stats{
		Renewals:       b.renewals.Load(),
		RenewFailures:  b.renewFailures.Load(),
		FailedAttempts: b.failedAttempts.Load(),
		Unreplicated:   b.unreplicated.Load(),
	}
	if b.notify != nil {
		s.Notifications = b.notify.messages.Load()
		s.Subscriptions = b.notify.subscribes.Load()
	}
	return s
}

func (b *base) Close() error {
	if b.notify != nil {
		b.notify.close()
	}
	return nil
}

// channel is where releases of key are announced for the pubsub wait policy; "" without it.
func (b *base) channel(key string) string {
	if b.notify == nil {
		return ""
	}
	return releaseChannel(key)
}

func releaseChannel(key string) string { return "lockbench:released:" + key }

// attempt is one try at a lock: a lease when acquired, (nil, nil) when someone else holds it.
// retryIn, when > 0, is how long the holder's lease still runs (PTTL), which bounds how long a
// pubsub waiter sleeps before trying again without a message.
type attempt func(ctx context.Context) (l Lease, retryIn time.Duration, err error)

// acquire runs try until it yields a lease or ctx ends, waiting per the wait policy between
// attempts. The uncontended path is one call of try: no timer, no subscription.
func (b *base) acquire(ctx context.Context, key, owner string, try attempt) (Lease, error) {
	for {
		l, err := b.wait(ctx, key, owner, try)
		if l == nil || b.o.WaitReplicas == 0 {
			return l, err
		}
		if ll, ok := l.(*lease); !ok || b.replicate(ctx, ll) {
			return l, nil
		}
		// Not on enough replicas: a failover now would lose it. Give it back and try again.
		_ = l.Release(context.WithoutCancel(ctx))
		b.failedAttempts.Add(1)
		if ctx.Err() != nil {
			return nil, notAcquired(ctx, key)
		}
	}
}

// replicate waits until WaitReplicas replicas acknowledged the lock and reports whether
// they did within ReplicaTimeout. Redis WAIT covers the writes of the connection it runs
// on, so a write probe — resetting the lease's own ttl — goes first on the same dedicated
// connection; replication is ordered, so its acknowledgement implies the lock's.
func (b *base) replicate(ctx context.Context, l *lease) bool {
	c := b.o.Client
	err := c.Dedicated(func(dc rueidis.DedicatedClient) error {
		rs := dc.DoMulti(ctx,
			dc.B().Pexpire().Key(l.key).Milliseconds(b.o.ttlMS).Build(),
			dc.B().Wait().Numreplicas(int64(b.o.WaitReplicas)).Timeout(b.o.ReplicaTimeout.Milliseconds()).Build())
		n, err := rs[1].AsInt64()
		if err == nil && n < int64(b.o.WaitReplicas) {
			err = fmt.Errorf("%d of %d replicas", n, b.o.WaitReplicas)
		}
		return err
	})
	if err != nil {
		b.unreplicated.Add(1)
		return false
	}
	return true
}

// wait runs try until it yields a lease or ctx ends, waiting per the wait policy between
// attempts. Without pubsub, and for a lock no local waiter is queued for, the uncontended
// path is one call of try: no timer, no registration.
func (b *base) wait(ctx context.Context, key, owner string, try attempt) (Lease, error) {
	if err := checkKey(key); err != nil {
		return nil, err
	}
	var w *waiter
	if b.notify != nil && b.notify.waiting(key) {
		// Others of this process may be queued for this lock: queue behind them before
		// trying, so that only the head contends with Redis.
		var err error
		if w, err = b.notify.enter(key, b.channel(key), "", owner); err != nil {
			return nil, b.attemptErr(ctx, key, err)
		}
		defer b.leave(w)
	}
	var retryIn time.Duration
	if w == nil || w.ahead == 0 {
		l, in, err := b.attempt(ctx, try)
		if l != nil || err != nil {
			return l, b.attemptErr(ctx, key, err)
		}
		retryIn = in
	}
	if b.notify != nil {
		registeredLate := w == nil
		if registeredLate {
			var err error
			if w, err = b.notify.enter(key, b.channel(key), "", owner); err != nil {
				return nil, b.attemptErr(ctx, key, err)
			}
			defer b.leave(w)
		}
		if !w.covered {
			if err := b.notify.subscribe(ctx, w); err != nil {
				return nil, b.attemptErr(ctx, key, err)
			}
		}
		// A release announced between our attempt and our registration (or before the
		// subscription was confirmed) reached nobody: try once more before sleeping.
		if registeredLate || !w.covered {
			if l := b.notify.take(w); l != nil {
				return l, nil // handed over while it subscribed
			}
			b.failedAttempts.Add(1)
			l, in, err := b.attempt(ctx, try)
			if l != nil || err != nil {
				return l, b.attemptErr(ctx, key, err)
			}
			retryIn = in
		}
	}

	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for n := 0; ; n++ {
		b.failedAttempts.Add(1)
		timer.Reset(b.pause(n, retryIn))
		var wake <-chan struct{}
		if w != nil {
			wake = w.wake
		}
		select {
		case <-ctx.Done():
			return nil, notAcquired(ctx, key)
		case <-timer.C:
		case <-wake:
		}
		if w != nil {
			if l := b.notify.take(w); l != nil {
				return l, nil // a release by this process acquired the lock for us
			}
		}
		l, in, err := b.attempt(ctx, try)
		if l != nil || err != nil {
			return l, b.attemptErr(ctx, key, err)
		}
		retryIn = in
	}
}

// attempt runs one try and stamps the lease it yields with the try's start: the earliest
// its ttl in Redis can have begun (lease.ValidUntil).
func (b *base) attempt(ctx context.Context, try attempt) (Lease, time.Duration, error) {
	sent := time.Now()
	l, in, err := try(ctx)
	if ll, ok := l.(*lease); ok {
		ll.stampValid(sent)
	}
	return l, in, err
}

// leave takes w out of its local queue. A lock handed over to w that it did not take (its
// wait ended at that moment) is released, which passes it on.
func (b *base) leave(w *waiter) {
	if l := b.notify.leave(w); l != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = l.Release(ctx)
	}
}

// announce returns the channel and payload a release of key publishes ("" without pubsub).
func (b *base) announce(key string) (channel, payload string) {
	if b.notify == nil {
		return "", ""
	}
	return releaseChannel(key), b.notify.self
}

// releasedLocally wakes the next waiter of this process for key after a release by it.
func (b *base) releasedLocally(key string) {
	if b.notify != nil && b.notify.released(releaseChannel(key)) {
		runtime.Gosched()
	}
}

// pause is how long to sleep before retry n (0-based), retryIn being what the last attempt
// returned. With delayedRetry, spin and backoff wait retryIn on top of their own pause; pubsub
// already sleeps just retryIn when it is set.
func (b *base) pause(n int, retryIn time.Duration) time.Duration {
	w := b.o.Wait
	var d time.Duration
	switch w.Kind {
	case WaitSpin:
		d = w.Interval
	case WaitPubSub:
		// Woken by a release message; the timer only covers a holder that never releases
		// (crashed, paused): its lease ends within retryIn, or within a ttl of our attempt.
		if retryIn > 0 {
			return retryIn + time.Millisecond
		}
		return b.o.TTL
	default:
		d = w.Max
		if n < 30 && w.Min<<n < w.Max {
			d = w.Min << n
		}
		d = d/2 + rand.N(d/2+1)
	}
	if b.delayedRetry {
		d += retryIn
	}
	return d
}

// attemptErr maps an error from an attempt: the caller's context ending mid-command is the
// wait ending, not a Redis failure. rueidis enforces a deadline itself and may report it a
// moment before ctx.Err() does, hence the deadline check.
func (b *base) attemptErr(ctx context.Context, key string, err error) error {
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return notAcquired(ctx, key)
	}
	if dl, ok := ctx.Deadline(); ok && errors.Is(err, context.DeadlineExceeded) && !time.Now().Before(dl.Add(-time.Millisecond)) {
		return fmt.Errorf("%w: key %s: %w", ErrNotAcquired, key, context.DeadlineExceeded)
	}
	return fmt.Errorf("%s: key %s: %w", b.info.Name, key, err)
}

func notAcquired(ctx context.Context, key string) error {
	return fmt.Errorf("%w: key %s: %w", ErrNotAcquired, key, ctx.Err())
}

// Tokens: unique per lease within the process (a counter) and across processes (the owner,
// which callers make unique, plus a random process nonce as a guard against careless owners).
var (
	tokenSeq   atomic.Uint64
	tokenNonce = func() string {
		var b [4]byte
		_, _ = crand.Read(b[:]) // never fails on Linux; a zero nonce would still be correct
		return hex.EncodeToString(b[:])
	}()
)

func newToken(owner string) string {
	var digits [13]byte // a uint64 in base 36; converted inside the concatenation: one allocation
	return owner + ":" + tokenNonce + "." + string(strconv.AppendUint(digits[:0], tokenSeq.Add(1), 36))
}
