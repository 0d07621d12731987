package strategies

import (
	"context"
	"strconv"
	"time"

	"github.com/redis/rueidis"
)

// fair is a FIFO lock (beyond the seeds; the idea of Redisson's RedissonFairLock, leaner):
// a contended acquirer appends "deadline:token" to the lock's queue, and a release hands the
// lock directly to the first waiter still within its deadline by writing that waiter's token
// into the lock, then wakes exactly that waiter (pubsub, addressed by token). The wake-up is
// part of the algorithm, whatever the wait policy: the policy only sets how often a waiter
// also polls, as a safety net (pubsub: when the holder's lease may have run out; spin and
// backoff: on their schedule). A queued waiter never competes again, so grants follow
// arrival order. The price is commands per acquire.
//
// When a lease expires while waiters queue (a crashed holder), nobody hands the lock on:
// the first waiter whose timer fires takes it with SET NX, leaving the queue order for the
// rest intact.
type fair struct {
	*base
	c rueidis.Client
	// queueTTL is the queue's ttl in ms (issue 21 item 15: a queue left by a killed process
	// must not stay forever), reset by every enqueue and every poll of a queued waiter: twice
	// the longest a waiter goes between polls (the ttl under pubsub, else the policy's pause).
	queueTTL string
}

// fairNative is fair's own wait, lockbench's design: the release that hands the lock over
// wakes its new holder, so a queued waiter has nothing to poll for while the holder's lease
// runs, and polls when it ends (pubsub's timer: the remaining lease the last try saw), for
// a lease that ran out with nobody to hand it on. The rest of the pubsub policy (local
// FIFO, turns) fair never uses.
var fairNative = Wait{Kind: WaitPubSub}

func newFair(info Info, o *resolved) (Strategy, error) {
	b, err := newBaseWaiting(info, o, o.Client, fairNative)
	if err != nil {
		return nil, err
	}
	if b.notify == nil {
		if b.notify, err = newNotifier(o.Client, o.patienceArg); err != nil {
			return nil, err
		}
	}
	poll := max(o.ttl, b.policy.Max, b.policy.Interval)
	return &fair{base: b, c: o.Client, queueTTL: strconv.FormatInt(2*poll.Milliseconds(), 10)}, nil
}

func (s *fair) Acquire(ctx context.Context, key, owner string) (Lease, error) {
	return s.acquireReplicated(ctx, s, key, owner)
}

func (s *fair) acquireOnce(ctx context.Context, key, owner string) (Lease, error) {
	if err := checkKey(key); err != nil {
		return nil, err
	}
	q := s.newQueuedAcquire(ctx, key, owner)
	// Register for the addressed wake-up before the first attempt: once the channel is
	// subscribed, a hand-over announced after this point cannot be missed.
	w, err := s.notify.enter(key, releaseChannel(key), q.args[0], owner)
	if err != nil {
		return nil, s.attemptErr(ctx, key, err)
	}
	l, err := s.queued(ctx, q, w)
	s.notify.leave(w)
	return l, err
}

// fairAcquire is one acquire's state: the script's keys and arguments, on the heap, so that
// the frames its attempts run under stay small (every attempt's wait for its reply lies
// under them, and a worker's stack must hold them: see base.wait). With them, its closures
// and its select in one frame of 736 bytes, nearly every worker of a fair fleet grew its
// stack from 4 to 8 KiB.
type fairAcquire struct {
	key, owner string
	keys       [2]string // the lock, its queue
	args       [5]string // token, ttl, "deadline:token", queued ("0"/"1"), queue ttl
	retryIn    time.Duration
}

//go:noinline
func (s *fair) newQueuedAcquire(ctx context.Context, key, owner string) *fairAcquire {
	lockKey := hashTagged(key)
	tok := newToken(owner)
	var deadline int64 // 0: this waiter waits without limit
	if dl, ok := ctx.Deadline(); ok {
		deadline = dl.UnixMilli()
	}
	entry := strconv.FormatInt(deadline, 10) + ":" + tok
	return &fairAcquire{
		key: key, owner: owner,
		keys: [2]string{lockKey, lockKey + ":q"},
		args: [5]string{tok, s.o.ttlArg, entry, "0", s.queueTTL},
	}
}

// queued is the acquire once registered (w): the first attempt, the subscription, then
// attempts at each wake-up or timer until the lock is ours, ctx ends or the phase does.
//
//go:noinline
func (s *fair) queued(ctx context.Context, q *fairAcquire, w *waiter) (Lease, error) {
	if ok, err := s.try(ctx, q); ok || err != nil {
		if ok {
			return s.won(q)
		}
		return nil, s.attemptErr(ctx, q.key, err)
	}
	q.args[3] = "1" // queued: from now on an attempt only checks whether the lock became ours

	if !w.covered {
		if err := s.notify.subscribe(ctx, w); err != nil {
			return s.giveUp(ctx, q, err)
		}
		// Subscribed now; the hand-over may have come before that.
		s.failedAttempts.Add(1)
		if ok, err := s.try(ctx, q); ok || err != nil {
			if ok {
				return s.won(q)
			}
			return s.giveUp(ctx, q, err)
		}
	}

	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	end := waitEnd(ctx) // the phase's end (WithWaitEnd): the waiter leaves the queue
	for n := 0; ; n++ {
		s.failedAttempts.Add(1)
		woken, err := s.sleep(ctx, end, timer, s.pause(n, q.retryIn), w, q.key)
		switch {
		case err != nil:
			return s.giveUp(ctx, q, err)
		case woken:
			// The message carries our token: the release already wrote it into the lock.
			return s.won(q)
		}
		if ok, err := s.try(ctx, q); ok || err != nil {
			if ok {
				return s.won(q)
			}
			return s.giveUp(ctx, q, err)
		}
	}
}

// try is one attempt of fair_acquire.lua: true when the lock is ours; otherwise q.retryIn
// is the holder's remaining lease as the script saw it, plus 1ms.
//
//go:noinline
func (s *fair) try(ctx context.Context, q *fairAcquire) (bool, error) {
	n, err := fairAcquireScript.ExecInt64(ctx, s.c, q.keys[:], q.args[:])
	if n < 0 {
		q.retryIn = time.Duration(-n) * time.Millisecond
	}
	return n == 1, err
}

// sleep is a queued waiter's pause: until the timer, its addressed wake-up (woken), ctx's
// end or the phase's (an error). A frame of its own, as base.sleep is.
//
//go:noinline
func (s *fair) sleep(ctx context.Context, end <-chan struct{}, timer *time.Timer, d time.Duration, w *waiter, key string) (woken bool, err error) {
	timer.Reset(d)
	select {
	case <-ctx.Done():
		return false, ctx.Err()
	case <-end:
		return false, waitEndedErr(key)
	case <-w.wake:
		return true, nil
	case <-timer.C:
		return false, nil
	}
}

//go:noinline
func (s *fair) won(q *fairAcquire) (Lease, error) {
	return s.newLease(s, q.key, q.keys[0], q.owner, q.args[0], 0), nil
}

// giveUp leaves the queue, and passes the lock on if it was handed to us meanwhile.
//
//go:noinline
func (s *fair) giveUp(ctx context.Context, q *fairAcquire, err error) (Lease, error) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
	defer cancel()
	_ = fairReleaseScript.Exec(cctx, s.c, q.keys[:], []string{q.args[0], s.o.ttlArg, nowMS(), releaseChannel(q.key), q.args[2]}).Error()
	return nil, s.attemptErr(ctx, q.key, err)
}

func (s *fair) release(ctx context.Context, l *lease) error {
	n, err := fairReleaseScript.ExecInt64(ctx, s.c, []string{l.key, l.key + ":q"},
		[]string{l.token, s.o.ttlArg, nowMS(), releaseChannel(l.name), ""})
	if err != nil {
		return err
	}
	if n == 0 {
		return ErrNotOwner
	}
	return nil
}

func (s *fair) renew(ctx context.Context, l *lease) (bool, error) {
	return compareExtend(ctx, s.c, l.key, l.token, s.o.ttlArg)
}

// nowMS is the release's "now" for skipping queued waiters whose deadline passed; waiters
// and releasers are assumed to share a clock (they do on one machine).
func nowMS() string { return strconv.FormatInt(time.Now().UnixMilli(), 10) }
