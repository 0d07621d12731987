package strategies

import (
	"context"
	"strconv"
	"time"

	"github.com/redis/rueidis"
)

// redissonFairWait is RedissonFairLock's default thread wait time (60000*5 ms in the source
// read): how long a queued waiter may go without trying before the others skip it.
const redissonFairWait = 5 * time.Minute

// redissonFair is Redisson's RedissonFairLock: RLock's hash, plus a queue of waiting owner
// ids (redisson_lock_queue:{name}) and their timeouts (redisson_lock_timeout:{name}, a sorted
// set of epoch ms), pruned of stale heads by every acquire and release. Only the queue's head
// may take a free lock, and a release wakes only it, on the head's own channel
// (redisson_lock__channel:{name}:owner): one subscription per waiter, as in Redisson. A waiter
// that gives up leaves the queue (redisson_fair_leave.lua); one that dies holds everyone behind
// it for up to the thread wait time. The wake-up is part of the algorithm whatever --wait
// says; the policy sets how often a waiter also polls. Timeouts are read from the clients'
// clocks, as Redisson does.
type redissonFair struct {
	*base
	c       rueidis.Client
	waitArg string // the thread wait time in ms
	latches latchSweeper
}

// Close waits for the unlock latches' DELs in flight.
func (s *redissonFair) Close() error {
	s.latches.wait()
	return s.base.Close()
}

func newRedissonFair(info Info, o *resolved) (Strategy, error) {
	b, err := newBase(info, o, o.Client)
	if err != nil {
		return nil, err
	}
	if b.notify == nil {
		if b.notify, err = newNotifier(o.Client, o.TTL); err != nil {
			return nil, err
		}
	}
	return &redissonFair{base: b, c: o.Client, waitArg: strconv.FormatInt(redissonFairWait.Milliseconds(), 10)}, nil
}

// redissonFairKeys are the lock, its queue and its timeouts, in the lock's hash slot.
func redissonFairKeys(key string) []string {
	tag := hashTagged(key)
	return []string{tag, "redisson_lock_queue:" + tag, "redisson_lock_timeout:" + tag}
}

func (s *redissonFair) Acquire(ctx context.Context, key, owner string) (Lease, error) {
	return s.acquireReplicated(ctx, s, key, owner)
}

func (s *redissonFair) acquireOnce(ctx context.Context, key, owner string) (Lease, error) {
	if err := checkKey(key); err != nil {
		return nil, err
	}
	keys := redissonFairKeys(key)
	try := func() (Lease, time.Duration, error) {
		args := []string{s.o.ttlArg, owner, s.waitArg, nowMS()}
		sent := time.Now()
		ms, err := redissonFairAcquireScript.Exec(ctx, s.c, keys, args).AsInt64()
		if rueidis.IsRedisNil(err) {
			l := s.newLease(s, key, keys[0], owner, owner, 0)
			l.stampValid(sent)
			return l, 0, nil
		}
		return nil, time.Duration(ms) * time.Millisecond, err
	}
	l, retryIn, err := try()
	if l != nil || err != nil {
		return l, s.attemptErr(ctx, key, err)
	}

	// Queued now. Subscribe to our own channel, whose message is Redisson's unlock message.
	w, err := s.notify.enter(key, "redisson_lock__channel:"+keys[0]+":"+owner, redissonUnlockMessage, owner)
	if err != nil {
		return s.giveUp(ctx, keys, key, owner, err)
	}
	defer s.notify.leave(w)
	if !w.covered {
		if err := s.notify.subscribe(ctx, w); err != nil {
			return s.giveUp(ctx, keys, key, owner, err)
		}
		s.failedAttempts.Add(1)
		if l, retryIn, err = try(); l != nil || err != nil {
			if err != nil {
				return s.giveUp(ctx, keys, key, owner, err)
			}
			return l, nil
		}
	}

	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for n := 0; ; n++ {
		s.failedAttempts.Add(1)
		timer.Reset(s.pause(n, max(retryIn, 0)))
		select {
		case <-ctx.Done():
			return s.giveUp(ctx, keys, key, owner, ctx.Err())
		case <-w.wake:
		case <-timer.C:
		}
		if l, retryIn, err = try(); l != nil || err != nil {
			if err != nil {
				return s.giveUp(ctx, keys, key, owner, err)
			}
			return l, nil
		}
	}
}

// giveUp leaves the queue (Redisson's acquireFailed) and maps err.
func (s *redissonFair) giveUp(ctx context.Context, keys []string, key, owner string, err error) (Lease, error) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
	defer cancel()
	_ = redissonFairLeaveScript.Exec(cctx, s.c, keys[1:], []string{owner, s.waitArg}).Error()
	return nil, s.attemptErr(ctx, key, err)
}

func (s *redissonFair) release(ctx context.Context, l *lease) error {
	latch := unlockLatchKey(l.key)
	keys := append(redissonFairKeys(l.name), "redisson_lock__channel:"+l.key, latch)
	err := redissonFairUnlockScript.Exec(ctx, s.c, keys, []string{redissonUnlockMessage, s.o.ttlArg, l.token, nowMS(), "publish", unlockLatchLife()}).Error()
	if err == nil || rueidis.IsRedisNil(err) {
		s.latches.del(s.c, latch) // RedissonBaseLock.unlockInnerAsync: DEL once the reply is in
	}
	if rueidis.IsRedisNil(err) {
		return ErrNotOwner
	}
	return err
}

func (s *redissonFair) renew(ctx context.Context, l *lease) (bool, error) {
	n, err := hashRenewScript.Exec(ctx, s.c, []string{l.key}, []string{l.token, s.o.ttlArg}).AsInt64()
	return n == 1, err
}
