package strategies

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/rueidis"
)

// reentrantLocal is seed 001's ThreadLocal scheme on top of token: a local table counts each
// owner's holds per key; only the first acquire talks to Redis and only the last release
// does. The owner is a handle the caller passes, not a goroutine id. The local count
// outlives the Redis lease: after the lease expired, a re-entry still "succeeds" locally
// while another client holds the lock. Nothing is reentrant across processes.
type reentrantLocal struct {
	*token
	mu    sync.Mutex
	holds map[holdKey]*localHold
}

type holdKey struct{ key, owner string }

type localHold struct {
	count int   // guarded by reentrantLocal.mu
	redis Lease // the token lease taken by the first acquire
}

func newReentrantLocal(info Info, o *resolved) (Strategy, error) {
	t, err := newTokenStrategy(info, o)
	if err != nil {
		return nil, err
	}
	return &reentrantLocal{token: t.(*token), holds: make(map[holdKey]*localHold)}, nil
}

func (s *reentrantLocal) Acquire(ctx context.Context, key, owner string) (Lease, error) {
	if err := checkKey(key); err != nil {
		return nil, err
	}
	k := holdKey{key, owner}
	s.mu.Lock()
	if h := s.holds[k]; h != nil {
		h.count++ // re-entry: local only, whatever Redis thinks
		s.mu.Unlock()
		return &localLease{s: s, k: k, h: h}, nil
	}
	s.mu.Unlock()

	l, err := s.token.Acquire(ctx, key, owner)
	if err != nil {
		return nil, err
	}
	h := &localHold{count: 1, redis: l}
	s.mu.Lock()
	s.holds[k] = h
	s.mu.Unlock()
	return &localLease{s: s, k: k, h: h}, nil
}

// localLease is one hold of a reentrant-local lock.
type localLease struct {
	s        *reentrantLocal
	k        holdKey
	h        *localHold
	released atomic.Bool
}

// Release gives up one hold. Only the last one talks to Redis, through the token lease, and
// so only it runs Hooks.ReleasePause (in lease.Release): the others have no command to stall.
func (l *localLease) Release(ctx context.Context) error {
	if !l.released.CompareAndSwap(false, true) {
		return fmt.Errorf("%w: key %s", ErrReleased, l.k.key)
	}
	l.s.mu.Lock()
	l.h.count--
	last := l.h.count == 0
	if last {
		delete(l.s.holds, l.k)
	}
	l.s.mu.Unlock()
	if !last {
		return nil
	}
	return l.h.redis.Release(ctx)
}

func (l *localLease) Fence() uint64         { return 0 }
func (l *localLease) Lost() <-chan struct{} { return l.h.redis.Lost() }

// ValidUntil is the token lease's (see lease.ValidUntil).
func (l *localLease) ValidUntil() time.Time { return l.h.redis.ValidUntil() }

// reentrantHash is seed 001's Redis hash scheme: the lock is a hash whose field ownerId
// counts that owner's holds; Lua scripts acquire, re-enter (both PEXPIRE the hash) and
// release (decrement, DEL at 0). Reentrant across processes for the same owner id; without a
// watchdog a long hold still outlives the ttl. Unlike Redisson's RLock (redisson-lock), a
// release that leaves holds does not re-arm the ttl.
type reentrantHash struct {
	*base
	c rueidis.Client
}

func newReentrantHash(info Info, o *resolved) (Strategy, error) {
	b, err := newBaseWaiting(info, o, o.Client, articleLoop)
	if err != nil {
		return nil, err
	}
	return &reentrantHash{base: b, c: o.Client}, nil
}

func (s *reentrantHash) Acquire(ctx context.Context, key, owner string) (Lease, error) {
	return s.acquire(ctx, key, owner, func(ctx context.Context) (Lease, time.Duration, error) {
		pttl, err := hashAcquireScript.ExecInt64(ctx, s.c, []string{key}, []string{s.o.ttlArg, owner})
		if rueidis.IsRedisNil(err) {
			return s.newLease(s, key, key, owner, owner, 0), 0, nil
		}
		if err != nil {
			return nil, 0, err
		}
		return nil, time.Duration(pttl) * time.Millisecond, nil
	})
}

func (s *reentrantHash) release(ctx context.Context, l *lease) error {
	n, err := hashReleaseScript.ExecInt64(ctx, s.c, []string{l.key}, []string{l.token})
	switch {
	case rueidis.IsRedisNil(err):
		return ErrNotOwner
	case err != nil:
		return err
	case n == 1 && s.notify != nil:
		// The last hold: the lock is free; pass the turn on (a second round trip: the hash
		// release is a script of its own).
		ch := s.channel(l.name)
		r, err := turnScript.ExecInt64(ctx, s.c, []string{waitList(l.name)}, s.turnArgs(ch, s.notify.hasWaiters(ch)))
		if err != nil {
			return err
		}
		return s.turned(l.name, r)
	}
	return nil
}

func (s *reentrantHash) renew(ctx context.Context, l *lease) (bool, error) {
	n, err := hashRenewScript.ExecInt64(ctx, s.c, []string{l.key}, []string{l.token, s.o.ttlArg})
	return n == 1, err
}
