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
	lockKey := hashTagged(key)
	keys := []string{lockKey, lockKey + ":q"}
	tok := newToken(owner)
	var deadline int64 // 0: this waiter waits without limit
	if dl, ok := ctx.Deadline(); ok {
		deadline = dl.UnixMilli()
	}
	entry := strconv.FormatInt(deadline, 10) + ":" + tok
	args := []string{tok, s.o.ttlArg, entry, "0", s.queueTTL}

	// Register for the addressed wake-up before the first attempt: once the channel is
	// subscribed, a hand-over announced after this point cannot be missed.
	w, err := s.notify.enter(key, releaseChannel(key), tok, owner)
	if err != nil {
		return nil, s.attemptErr(ctx, key, err)
	}
	defer s.notify.leave(w)

	var retryIn time.Duration // the holder's remaining lease as the last try saw it, plus 1ms: > 0
	try := func() (bool, error) {
		n, err := fairAcquireScript.Exec(ctx, s.c, keys, args).AsInt64()
		if n < 0 {
			retryIn = time.Duration(-n) * time.Millisecond
		}
		return n == 1, err
	}
	won := func() (Lease, error) { return s.newLease(s, key, lockKey, owner, tok, 0), nil }
	giveUp := func(err error) (Lease, error) {
		// Leave the queue, and pass the lock on if it was handed to us meanwhile.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		defer cancel()
		_ = fairReleaseScript.Exec(cctx, s.c, keys, []string{tok, s.o.ttlArg, nowMS(), releaseChannel(key), entry}).Error()
		return nil, s.attemptErr(ctx, key, err)
	}

	if ok, err := try(); ok || err != nil {
		if ok {
			return won()
		}
		return nil, s.attemptErr(ctx, key, err)
	}
	args[3] = "1" // queued: from now on an attempt only checks whether the lock became ours

	if !w.covered {
		if err := s.notify.subscribe(ctx, w); err != nil {
			return giveUp(err)
		}
		// Subscribed now; the hand-over may have come before that.
		s.failedAttempts.Add(1)
		if ok, err := try(); ok || err != nil {
			if ok {
				return won()
			}
			return giveUp(err)
		}
	}

	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	end := waitEnd(ctx) // the phase's end (WithWaitEnd): the waiter leaves the queue
	for n := 0; ; n++ {
		s.failedAttempts.Add(1)
		timer.Reset(s.pause(n, retryIn))
		select {
		case <-ctx.Done():
			return giveUp(ctx.Err())
		case <-end:
			return giveUp(waitEndedErr(key))
		case <-w.wake:
			// The message carries our token: the release already wrote it into the lock.
			return won()
		case <-timer.C:
		}
		if ok, err := try(); ok || err != nil {
			if ok {
				return won()
			}
			return giveUp(err)
		}
	}
}

func (s *fair) release(ctx context.Context, l *lease) error {
	n, err := fairReleaseScript.Exec(ctx, s.c, []string{l.key, l.key + ":q"},
		[]string{l.token, s.o.ttlArg, nowMS(), releaseChannel(l.name), ""}).AsInt64()
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
