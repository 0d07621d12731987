package strategies

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// multiLockWaitPerKey is how long RedissonMultiLock.lock() tries one round for each lock of
// the set (baseWaitTime = locks * 1500 ms) before it gives back what it holds and starts over.
const multiLockWaitPerKey = 1500 * time.Millisecond

// multiLock is Redisson's RedissonMultiLock over RLocks (redisson-4.7.0,
// RedissonMultiLock.java): every key of a set is an RLock (redisson-lock's scripts, waiting
// and watchdog), taken one after the other in the order given, each waited for as long as the
// round has left (tryLock(waitTime, leaseTime), lines 306-400). A round's length is
// lockInterruptibly's (lines 241-266): without a lease locks * 1500 ms; with a lease (--ttl) a
// random length, in [lease/2, lease) when the lease is at most locks * 1500 ms, else in
// [locks * 1500 ms, lease). With a lease each key is taken with a lease of twice the round
// while the set is acquired, and once it is complete every key's lease is set to the lease
// (checkLeaseTime: RLock.expireAsync, a PEXPIRE per key); without one, each key is renewed by
// redisson-lock's watchdog. When a round runs out before the set is complete, what it took is
// given back and a new round starts from the first key. That breaks a deadlock between sets
// that list shared keys in opposite orders, but not the livelock that follows: the set that
// gives up takes its first key again at once, before the waiter it freed it for gets there.
// With 20 workers taking random-order sets of 3 of 10 keys, an acquire did not complete in 2
// minutes; with each set in the keys' order, all of them took 0.3s. A release unlocks every
// key at once. Acquire is a set of one key.
type multiLock struct {
	*redissonLock
}

func newMultiLock(info Info, o *resolved) (Strategy, error) {
	s, err := newRedissonLock(info, o)
	if err != nil {
		return nil, err
	}
	return &multiLock{s.(*redissonLock)}, nil
}

func (s *multiLock) Acquire(ctx context.Context, key, owner string) (Lease, error) {
	return s.AcquireSet(ctx, []string{key}, owner)
}

// leased says the set is taken with a lease (lock(leaseTime)), not renewed by a watchdog.
func (s *multiLock) leased() bool { return s.o.renewal == 0 && !s.o.TTL.None() }

// round is the length of one round for a set of n keys (RedissonMultiLock.lockInterruptibly).
func (s *multiLock) round(n int) time.Duration {
	base := time.Duration(n) * multiLockWaitPerKey
	if !s.leased() {
		return base
	}
	lease := s.o.ttlMS
	lo, hi := lease/2, lease // ThreadLocalRandom.nextLong(lo, hi): [lo, hi)
	if lease > base.Milliseconds() {
		lo = base.Milliseconds()
	}
	if hi <= lo {
		return time.Duration(lo) * time.Millisecond
	}
	return time.Duration(lo+rand.Int64N(hi-lo)) * time.Millisecond
}

// AcquireSet takes every key of keys, or none.
func (s *multiLock) AcquireSet(ctx context.Context, keys []string, owner string) (Lease, error) {
	if len(keys) == 0 {
		return nil, &OptionError{Field: "keys", Value: "[]", Reason: "a multilock needs at least one key"}
	}
	for _, k := range keys {
		if err := checkKey(k); err != nil {
			return nil, err
		}
	}
	for {
		round := s.round(len(keys))
		leaseMS := s.o.ttlArg
		if s.leased() {
			leaseMS = strconv.FormatInt(2*round.Milliseconds(), 10) // newLeaseTime = waitTime * 2
		}
		held := make([]Lease, 0, len(keys))
		rctx, cancel := context.WithTimeout(ctx, round)
		var err error
		for _, k := range keys {
			var l Lease
			if l, err = s.redissonLock.acquireFor(rctx, k, owner, leaseMS); err != nil {
				break
			}
			held = append(held, l)
		}
		cancel()
		if err == nil && s.leased() {
			err = s.expireAll(ctx, held)
		}
		if err == nil {
			if len(held) == 1 {
				return held[0], nil
			}
			return newMultiLease(held), nil
		}
		unlockAll(context.WithoutCancel(ctx), held)
		switch {
		case ctx.Err() != nil:
			return nil, fmt.Errorf("%w: keys %v: %w", ErrNotAcquired, keys, ctx.Err())
		case !errors.Is(err, ErrNotAcquired):
			return nil, err // a Redis failure
		}
		s.failedAttempts.Add(1) // the round ran out: start over
	}
}

// expireAll sets every held key's lease to the ttl once the set is complete
// (RedissonMultiLock.checkLeaseTime: RLock.expireAsync, RedissonExpirable.expireAsync's
// script, one per key, together).
func (s *multiLock) expireAll(ctx context.Context, held []Lease) error {
	errs := make([]error, len(held))
	var wg sync.WaitGroup
	for i, l := range held {
		wg.Go(func() {
			ll := l.(*lease)
			sent := time.Now()
			errs[i] = redissonExpireScript.Exec(ctx, s.c, []string{ll.key}, []string{s.o.ttlArg, ""}).Error()
			if errs[i] == nil {
				ll.stampValid(sent)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// unlockAll releases ls together, as RedissonMultiLock.unlockInner does, and joins the errors.
func unlockAll(ctx context.Context, ls []Lease) error {
	if len(ls) == 0 {
		return nil
	}
	errs := make([]error, len(ls))
	var wg sync.WaitGroup
	for i, l := range ls[1:] {
		wg.Go(func() { errs[i+1] = l.Release(ctx) })
	}
	errs[0] = ls[0].Release(ctx)
	wg.Wait()
	return errors.Join(errs...)
}

// multiLease holds every key of a set: one lease of redisson-lock's per key.
type multiLease struct {
	members  []Lease
	released atomic.Bool
	lost     chan struct{} // closed when any member is lost; nil without a watchdog
	done     chan struct{} // closed on release: the lost watchers end
}

func newMultiLease(members []Lease) *multiLease {
	m := &multiLease{members: members}
	if members[0].Lost() == nil {
		return m
	}
	m.lost, m.done = make(chan struct{}), make(chan struct{})
	var once sync.Once
	for _, l := range members {
		go func() {
			select {
			case <-l.Lost():
				once.Do(func() { close(m.lost) })
			case <-m.done:
			}
		}()
	}
	return m
}

// Release unlocks every key; the error joins those of the keys that were no longer held.
func (m *multiLease) Release(ctx context.Context) error {
	if !m.released.CompareAndSwap(false, true) {
		return fmt.Errorf("%w: a set of %d keys", ErrReleased, len(m.members))
	}
	if m.done != nil {
		close(m.done)
	}
	return unlockAll(ctx, m.members)
}

func (m *multiLease) Fence() uint64 { return 0 }

func (m *multiLease) Lost() <-chan struct{} { return m.lost }

// ValidUntil is the earliest of the members' (lease.ValidUntil); zero when one is unknown.
func (m *multiLease) ValidUntil() time.Time {
	var until time.Time
	for _, l := range m.members {
		v := l.ValidUntil()
		if v.IsZero() {
			return time.Time{}
		}
		if until.IsZero() || v.Before(until) {
			until = v
		}
	}
	return until
}
