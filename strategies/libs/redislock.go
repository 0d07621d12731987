package libs

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/bsm/redislock"
	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/strategies"
)

// redislockLock is bsm/redislock's Client.Obtain over a go-redis client: one Lua script that
// sets the lock (SET NX PX), a compare-and-delete script to release it, Refresh to extend it
// (lockbench's watchdog, with --watchdog). The library's default retry strategy is NoRetry —
// Obtain tries once and returns ErrNotObtained — so `redislock` is a try-lock: a busy key
// fails at once (a timeout here) and the caller's loop, the engine's worker, tries again at
// once. The retrying variants are what its documentation offers (see the Retry constants).
type redislockLock struct {
	common
	client redis.UniversalClient
	locker *redislock.Client
	// retry returns the retry strategy of one Obtain, which watches its attempts; nil for
	// NoRetry, whose one failed attempt is its ErrNotObtained.
	retry func() *attempts
}

// The backoffs of the retrying redislock variants, from the library's documentation: its
// example retries every 100ms (ExampleClient_Obtain_retry, without LimitRetry here: the
// acquire timeout bounds it), and ExponentialBackoff's comment recommends a minimum of no
// less than 16ms; it takes a maximum, which the documentation leaves to the user: 0, none.
const (
	LinearRetry = 100 * time.Millisecond
	ExpRetryMin = 16 * time.Millisecond
	ExpRetryMax = 0
)

func newRedislock(retry string) func(strategies.Info, strategies.Options) (strategies.Strategy, error) {
	return func(info strategies.Info, o strategies.Options) (strategies.Strategy, error) {
		if err := noReplicaWait(info, o); err != nil {
			return nil, err
		}
		c, err := goRedisClient(o.Connect, o.Client.Mode())
		if err != nil {
			return nil, err
		}
		s := &redislockLock{common: newCommon(info, o), client: c, locker: redislock.New(c)}
		failed := &s.failedAttempts
		switch retry {
		case "linear":
			s.retry = func() *attempts {
				return &attempts{RetryStrategy: redislock.LinearBackoff(LinearRetry), failed: failed}
			}
		case "exp":
			// ExponentialBackoff counts its retries: a new one for every Obtain, as for a user.
			s.retry = func() *attempts {
				return &attempts{RetryStrategy: redislock.ExponentialBackoff(ExpRetryMin, ExpRetryMax), failed: failed}
			}
		}
		return s, nil
	}
}

// attempts is the retry strategy of one Obtain, watched: redislock asks it for the next
// backoff once after every attempt that found the lock taken, and waits that long before the
// next attempt. So each call is a failed attempt, and the attempt that succeeds began no
// earlier than the last backoff's end — the earliest the lease's ttl can have begun.
type attempts struct {
	redislock.RetryStrategy
	failed *atomic.Uint64
	next   time.Time // earliest start of the next attempt
}

func (a *attempts) NextBackoff() time.Duration {
	a.failed.Add(1)
	d := a.RetryStrategy.NextBackoff()
	a.next = time.Now().Add(d)
	return d
}

func (s *redislockLock) Acquire(ctx context.Context, key, owner string) (strategies.Lease, error) {
	if err := checkKey(key); err != nil {
		return nil, err
	}
	var opt *redislock.Options // nil: the library's defaults, NoRetry
	var retry *attempts
	if s.retry != nil {
		retry = s.retry()
		opt = &redislock.Options{RetryStrategy: retry}
	}
	sent := time.Now()
	lock, err := s.locker.Obtain(ctx, key, s.ttl, opt)
	if err != nil {
		if errors.Is(err, redislock.ErrNotObtained) && ctx.Err() == nil {
			if s.retry == nil {
				s.failedAttempts.Add(1)
			}
			return nil, notAcquired(key, err) // its retry strategy gave up
		}
		return nil, s.acquireErr(ctx, key, err)
	}
	if retry != nil && retry.next.After(sent) {
		sent = retry.next // the attempt that took it began after the last backoff
	}
	return s.newLease(&redislockLease{lock: lock, ttl: s.ttl}, key, owner, sent.Add(s.ttl)), nil
}

func (s *redislockLock) Close() error { return s.client.Close() }

type redislockLease struct {
	lock *redislock.Lock
	ttl  time.Duration
}

func (l *redislockLease) release(ctx context.Context) error {
	err := l.lock.Release(ctx)
	if errors.Is(err, redislock.ErrLockNotHeld) {
		return errNotOwner(err)
	}
	return err
}

func (l *redislockLease) renew(ctx context.Context, sent time.Time) (time.Time, bool, error) {
	switch err := l.lock.Refresh(ctx, l.ttl, nil); {
	case err == nil:
		return sent.Add(l.ttl), true, nil
	case errors.Is(err, redislock.ErrNotObtained):
		return time.Time{}, false, nil
	default:
		return time.Time{}, false, err
	}
}
