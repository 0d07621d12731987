package strategies

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/redis/rueidis"
)

// redissonSource names the Redisson release these strategies follow: the files under
// redisson/src/main/java/org/redisson/ (RedissonLock.java, RedissonBaseLock.java,
// RedissonSpinLock.java, RedissonFairLock.java, RedissonReadLock.java, RedissonWriteLock.java,
// RedissonMultiLock.java, RedissonSemaphore.java, RedissonPermitExpirableSemaphore.java,
// pubsub/, renewal/, config/) at tag redisson-4.7.0, commit 0c286e86eb81 (2026-08-04), the
// newest release; master at 66863978b (2026-08-21) has the same files. Line numbers in these
// comments are that tag's.
const redissonSource = "Redisson redisson-4.7.0 (commit 0c286e8)"

// redissonRelease is redissonSource for NativeWait texts.
const redissonRelease = redissonSource

// redissonLock is Redisson's RLock (RedissonLock), or with spin its RedissonSpinLock. The lock
// is a hash under the hash-tagged name whose field ownerId counts the owner's holds
// (redisson_acquire.lua). Unlike reentrant-hash, a release that leaves holds re-arms the lease,
// and the last one deletes the lock and announces it on the lock's own channel,
// redisson_lock__channel:{name} (redisson_unlock.lua); every unlock runs Redisson's unlock
// latch (redisson_latch.go).
//
// Under --wait native a waiter waits as Redisson's does (redisson_wait.go): it tries first,
// subscribes to the lock's channel once per process, and sleeps on the channel's latch at most
// the ttl the script returned. With the pubsub wait policy (a what-if) the announcement is a
// turn (notify.go): where Redisson wakes one waiter in every process that subscribes,
// lockbench wakes one waiter of the process whose turn it is.
//
// The spin lock never announces; its waiters poll with Redisson's ExponentialBackOff, whatever
// --wait says (redissonBackoff). Leases and renewal are Redisson's call's (redisson_call.go:
// lock()'s 30s lease renewed every 10s unless a ttl is given), renewed once per lock
// (redisson_renew.go).
type redissonLock struct {
	*base
	c       rueidis.Client
	spin    bool
	latches latchSweeper
	dogs    redissonRenewals
	ps      *redissonPubSub // Redisson's own wait (--wait native), else nil
	redissonLease
}

// redissonNative is the generic policy the Redisson family names as its own under --wait
// native (newBaseWaiting). Its own wait is base.native, Redisson's (redisson_wait.go), which
// base.wait calls instead; this backoff only sets base.policy, which the native wait never
// reads.
var redissonNative = Wait{Kind: WaitBackoff}

func newRedissonLock(info Info, o *resolved) (Strategy, error) {
	call := redissonCall(o)
	b, err := newBaseWaiting(info, o, o.Client, redissonNative)
	if err != nil {
		return nil, err
	}
	ps := redissonNativeWait(b, o.Client, lockMessages, redissonLockChannel, sleepTTL)
	return &redissonLock{base: b, c: o.Client, ps: ps, redissonLease: call}, nil
}

func newRedissonSpinLock(info Info, o *resolved) (Strategy, error) {
	// No pub/sub: Redisson's backoff replaces the wait policy (Info.Applies has no wait).
	o.Wait = Wait{Kind: WaitBackoff, Min: redissonBackoffInitial, Max: redissonBackoffMax}
	call := redissonCall(o)
	b, err := newBaseWaiting(info, o, o.Client, o.Wait) // its native wait is that backoff
	if err != nil {
		return nil, err
	}
	b.redissonBackoff = true
	return &redissonLock{base: b, c: o.Client, spin: true, redissonLease: call}, nil
}

func (s *redissonLock) Acquire(ctx context.Context, key, owner string) (Lease, error) {
	return s.acquireFor(ctx, key, owner, s.o.ttlArg)
}

// acquireFor takes key with a lease of leaseMS (formatted ms): the ttl, or a multilock's lease
// while it acquires.
func (s *redissonLock) acquireFor(ctx context.Context, key, owner, leaseMS string) (Lease, error) {
	lockKey := hashTagged(key)
	acquire := redissonAcquireScript
	if s.spin {
		acquire = redissonSpinAcquireScript
	}
	return s.acquire(ctx, key, owner, func(ctx context.Context) (Lease, time.Duration, error) {
		pttl, err := acquire.ExecInt64(ctx, s.c, []string{lockKey}, []string{leaseMS, owner})
		if rueidis.IsRedisNil(err) {
			return s.granted(key, lockKey, owner)
		}
		if err != nil {
			return nil, 0, err
		}
		return nil, time.Duration(pttl) * time.Millisecond, nil
	})
}

// granted is the attempt's lease, made in a frame of its own: the attempt's frame lies
// under the script's wait for its reply (see base.turnCall).
//
//go:noinline
func (s *redissonLock) granted(key, lockKey, owner string) (Lease, time.Duration, error) {
	return s.dogs.newLease(s.base, s, key, lockKey, owner, owner), 0, nil
}

// redissonUnlockMessage is LockPubSub.UNLOCK_MESSAGE.
const redissonUnlockMessage = "0"

func (s *redissonLock) release(ctx context.Context, l *lease) error {
	latch := unlockLatchKey(l.key)
	var r int64
	var err error
	if s.spin {
		r, err = redissonSpinUnlockScript.ExecInt64(ctx, s.c, []string{l.key, latch},
			[]string{s.o.ttlArg, l.token, unlockLatchLife()})
	} else {
		keys := []string{l.key, "redisson_lock__channel:" + l.key, latch}
		args := []string{redissonUnlockMessage, s.o.ttlArg, l.token, "publish", unlockLatchLife()}
		if s.notify != nil {
			ch := s.channel(l.name)
			keys[1] = waitList(l.name)
			args = append(args, s.turnArgs(ch, s.notify.hasWaiters(ch))...)
		}
		r, err = redissonUnlockScript.ExecInt64(ctx, s.c, keys, args)
	}
	if err == nil || rueidis.IsRedisNil(err) {
		s.latches.del(s.c, latch) // RedissonBaseLock.unlockInnerAsync: DEL once the reply is in
	}
	switch {
	case rueidis.IsRedisNil(err):
		return ErrNotOwner
	case err != nil:
		return err
	case r == 0 || s.notify == nil:
		return nil // holds remain, or nobody here waits on messages
	}
	return s.turned(l.name, r)
}

// redissonLockChannel is RedissonLock.getChannelName for the lock named key.
func redissonLockChannel(key string) string { return "redisson_lock__channel:" + hashTagged(key) }

// Close ends the subscriptions and waits for the unlock latches' DELs in flight.
func (s *redissonLock) Close() error {
	closePubSub(s.ps)
	s.latches.wait()
	return s.base.Close()
}

// Stats adds Redisson's own subscriptions to the common counters.
func (s *redissonLock) Stats() Stats { return withPubSub(s.base.Stats(), s.ps) }

func (s *redissonLock) renew(ctx context.Context, l *lease) (bool, error) {
	// RedissonBaseLock.renewExpirationAsync: the same script as reentrant-hash's renewal.
	n, err := hashRenewScript.ExecInt64(ctx, s.c, []string{l.key}, []string{l.token, s.o.ttlArg})
	return n == 1, err
}

// Redisson's LockOptions.ExponentialBackOff defaults: the first sleep 1 ms, each next one
// twice the last plus a random 0..fails-1 ms, at most 128 ms.
const (
	redissonBackoffInitial = time.Millisecond
	redissonBackoffMax     = 128 * time.Millisecond
)

// redissonBackoff is the sleep before retry n (0-based) of RedissonSpinLock, prev being the
// sleep before retry n-1 (ExponentialBackOffPolicy.getNextSleepPeriod).
func redissonBackoff(n int, prev time.Duration) time.Duration {
	if n == 0 {
		return redissonBackoffInitial
	}
	return min(redissonBackoffMax, 2*prev+time.Duration(rand.IntN(n))*time.Millisecond)
}
