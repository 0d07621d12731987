package strategies

import (
	"context"
	"strconv"
	"time"

	"github.com/redis/rueidis"
)

// redissonFairWait is RedissonFairLock's thread wait for lock(), which has no wait time
// (Config.fairLockWaitTimeout, 5 * 60000 ms in redisson-4.7.0): how long a queued waiter may
// go without trying before the others skip it. tryLock(waitTime) uses waitTime instead
// (RedissonFairLock.tryLockInnerAsync and acquireFailedAsync, "if (waitTime > 0) wait =
// waitTime"), and so does lockbench, whose acquires all end at --acquire-timeout: the thread
// wait is the time the acquire's context has left when it starts.
const redissonFairWait = 5 * time.Minute

// redissonFair is Redisson's RedissonFairLock: RLock's hash, plus a queue of waiting owner
// ids (redisson_lock_queue:{name}) and their timeouts (redisson_lock_timeout:{name}, a sorted
// set of epoch ms), pruned of stale heads by every acquire and release. Only the queue's head
// may take a free lock, and a release wakes only it, on the head's own channel
// (redisson_lock__channel:{name}:owner): one subscription per waiter, as in Redisson
// (RedissonFairLock.subscribe). A waiter waits as RedissonLock.tryLock does (redisson_wait.go):
// it sleeps on its channel at most the ttl the script returned (the lock's remaining lease
// once queued) or the time it has left; with --wait spin or backoff it sleeps the policy's
// pause instead, still woken by its channel. A waiter that gives up leaves the queue
// (redisson_fair_leave.lua); one that dies holds everyone behind it for up to the thread wait
// time. Timeouts are read from the clients' clocks, as Redisson does.
type redissonFair struct {
	*base
	c       rueidis.Client
	ps      *redissonPubSub
	latches latchSweeper
	dogs    redissonRenewals
	redissonLease
}

func newRedissonFair(info Info, o *resolved) (Strategy, error) {
	call := redissonCall(o)
	b, err := newBase(info, o, o.Client)
	if err != nil {
		return nil, err
	}
	return &redissonFair{base: b, c: o.Client, ps: newRedissonPubSub(o.Client, lockMessages), redissonLease: call}, nil
}

// Close ends the subscriptions and waits for the unlock latches' DELs in flight.
func (s *redissonFair) Close() error {
	s.ps.close()
	s.latches.wait()
	return s.base.Close()
}

// Stats adds the fair lock's own subscriptions to the common counters.
func (s *redissonFair) Stats() Stats {
	st := s.base.Stats()
	st.Notifications += s.ps.messages.Load()
	st.Subscriptions += s.ps.subscribes.Load()
	return st
}

// threadWait is the thread wait for an acquire under ctx, in ms: tryLock(waitTime)'s
// waitTime, the time ctx has left; lock()'s redissonFairWait when ctx has no deadline.
func threadWait(ctx context.Context) string {
	w := redissonFairWait
	if dl, ok := ctx.Deadline(); ok {
		w = max(time.Until(dl), time.Millisecond)
	}
	return strconv.FormatInt(w.Milliseconds(), 10)
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
	wait := threadWait(ctx)
	try := func(ctx context.Context) (Lease, time.Duration, error) {
		args := []string{s.o.ttlArg, owner, wait, nowMS()}
		sent := time.Now()
		ms, err := redissonFairAcquireScript.ExecInt64(ctx, s.c, keys, args)
		if rueidis.IsRedisNil(err) {
			l := s.dogs.newLease(s.base, s, key, keys[0], owner, owner)
			l.stampValid(sent)
			return l, 0, nil
		}
		return nil, time.Duration(ms) * time.Millisecond, err
	}
	sleep := sleepTTL
	if k := s.o.Wait.Kind; k == WaitSpin || k == WaitBackoff {
		sleep = func(n int, ttl, left time.Duration) time.Duration { return min(s.pause(n, max(ttl, 0)), left) }
	}
	l, err := s.ps.tryLock(ctx, "redisson_lock__channel:"+keys[0]+":"+owner, try, sleep, &s.failedAttempts)
	if l != nil {
		return l, nil
	}
	if err == nil {
		err = ctx.Err()
		if err == nil {
			err = context.DeadlineExceeded
		}
	}
	return s.giveUp(ctx, keys, key, owner, wait, err)
}

// giveUp leaves the queue (Redisson's acquireFailed) and maps err.
func (s *redissonFair) giveUp(ctx context.Context, keys []string, key, owner, wait string, err error) (Lease, error) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
	defer cancel()
	_ = redissonFairLeaveScript.Exec(cctx, s.c, keys[1:], []string{owner, wait}).Error()
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
	n, err := hashRenewScript.ExecInt64(ctx, s.c, []string{l.key}, []string{l.token, s.o.ttlArg})
	return n == 1, err
}
