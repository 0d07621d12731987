package strategies

import (
	"context"
	"time"

	"github.com/redis/rueidis"
)

// rwLock is Redisson's RReadWriteLock (RedissonReadWriteLock, RedissonReadLock,
// RedissonWriteLock). The lock is a hash under the hash-tagged name: field 'mode' is 'read'
// or 'write', a writer's field (owner + ":write") counts its holds, a reader's (owner) its
// read holds, and each read hold has a timeout key of its own,
// {name}:owner:rwlock_timeout:N, with the lease as ttl, so that the lock lives as long as
// the longest hold still renewed. Both locks are reentrant; the writer may also read, a
// reader may not write. A freed lock is announced on redisson_rwlock:{name}.
//
// Redisson wakes every waiter when a writer lets go (READ_UNLOCK_MESSAGE: readers may all
// come in) and one when the last reader does. The pubsub wait policy wakes one waiter of one
// process per release; a reader that gets in after waiting wakes the next waiter of its
// process, so that the readers queued there follow one another in. A waiter sleeps at most
// the lock's remaining lease, as Redisson's does.
//
// The watchdog renews a writer's field (Redisson falls back to the read renewal when the
// writer's field is gone, which would hide a lost write lock from lockbench) and, for a
// reader, the lock and every reader's timeout keys.
type rwLock struct {
	*base
	c       rueidis.Client
	latches latchSweeper
	dogs    redissonRenewals
	ps      *redissonPubSub // Redisson's own wait (--wait native), else nil
	redissonLease
}

// rwReader is the rwLock's side of a read lease.
type rwReader rwLock

// LockPubSub's messages.
const redissonReadUnlockMessage = "1"

func newRWLock(info Info, o *resolved) (Strategy, error) {
	call := redissonCall(o)
	b, err := newBaseWaiting(info, o, o.Client, redissonNative)
	if err != nil {
		return nil, err
	}
	ps := redissonNativeWait(b, o.Client, lockMessages, func(key string) string { return rwChannel(hashTagged(key)) }, sleepTTL)
	return &rwLock{base: b, c: o.Client, ps: ps, redissonLease: call}, nil
}

func rwChannel(lockKey string) string { return "redisson_rwlock:" + lockKey }

// Acquire takes the write lock.
func (s *rwLock) Acquire(ctx context.Context, key, owner string) (Lease, error) {
	lockKey, field := hashTagged(key), owner+":write"
	return s.acquire(ctx, key, owner, func(ctx context.Context) (Lease, time.Duration, error) {
		pttl, err := rwWriteAcquireScript.ExecInt64(ctx, s.c, []string{lockKey}, []string{s.o.ttlArg, field})
		if rueidis.IsRedisNil(err) {
			return s.dogs.newLease(s.base, s, key, lockKey, owner, field), 0, nil
		}
		return nil, time.Duration(pttl) * time.Millisecond, err
	})
}

// AcquireShared takes the read lock.
func (s *rwLock) AcquireShared(ctx context.Context, key, owner string) (Lease, error) {
	lockKey := hashTagged(key)
	keys := []string{lockKey, lockKey + ":" + owner + ":rwlock_timeout"}
	args := []string{s.o.ttlArg, owner, owner + ":write"}
	l, err := s.acquire(ctx, key, owner, func(ctx context.Context) (Lease, time.Duration, error) {
		pttl, err := rwReadAcquireScript.ExecInt64(ctx, s.c, keys, args)
		if rueidis.IsRedisNil(err) {
			return s.dogs.newLease(s.base, (*rwReader)(s), key, lockKey, owner, owner), 0, nil
		}
		return nil, time.Duration(pttl) * time.Millisecond, err
	})
	if l != nil && s.notify != nil && s.notify.waiting(key) {
		s.notify.wakeLocal(s.channel(key)) // a reader queued behind may come in too
	}
	return l, err
}

func (s *rwLock) release(ctx context.Context, l *lease) error {
	latch := unlockLatchKey(l.key)
	keys, args := s.announce([]string{l.key, latch}, []string{redissonReadUnlockMessage, s.o.ttlArg, l.token, unlockLatchLife()}, l.name, rwChannel(l.key))
	r, err := rwWriteUnlockScript.ExecInt64(ctx, s.c, keys, args)
	s.delLatch(err, latch)
	switch {
	case rueidis.IsRedisNil(err):
		return ErrNotOwner
	case err != nil:
		return err
	}
	return s.announced(l.name, r)
}

// delLatch DELs an unlock's latch once its script answered (RedissonBaseLock.unlockInnerAsync).
func (s *rwLock) delLatch(err error, latch string) {
	if err == nil || rueidis.IsRedisNil(err) {
		s.latches.del(s.c, latch)
	}
}

// Close ends the subscriptions and waits for the unlock latches' DELs in flight.
func (s *rwLock) Close() error {
	closePubSub(s.ps)
	s.latches.wait()
	return s.base.Close()
}

// Stats adds Redisson's own subscriptions to the common counters.
func (s *rwLock) Stats() Stats { return withPubSub(s.base.Stats(), s.ps) }

func (s *rwLock) renew(ctx context.Context, l *lease) (bool, error) {
	n, err := hashRenewScript.ExecInt64(ctx, s.c, []string{l.key}, []string{l.token, s.o.ttlArg})
	return n == 1, err
}

func (r *rwReader) release(ctx context.Context, l *lease) error {
	s := (*rwLock)(r)
	latch := unlockLatchKey(l.key)
	keys := []string{l.key, l.key + ":" + l.token + ":rwlock_timeout", l.key, latch}
	keys, args := s.announce(keys, []string{redissonUnlockMessage, l.token, unlockLatchLife()}, l.name, rwChannel(l.key))
	n, err := rwReadUnlockScript.ExecInt64(ctx, s.c, keys, args)
	s.delLatch(err, latch)
	switch {
	case rueidis.IsRedisNil(err):
		return ErrNotOwner
	case err != nil:
		return err
	}
	return s.announced(l.name, n)
}

func (r *rwReader) renew(ctx context.Context, l *lease) (bool, error) {
	n, err := rwReadRenewScript.ExecInt64(ctx, r.c, []string{l.key, l.key}, []string{r.o.ttlArg, l.token})
	return n == 1, err
}
