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

	// policy is the generic wait policy that wait follows between attempts: Options.Wait, or
	// under --wait native the one nativePolicy names (lockbench's default backoff when it
	// names none).
	policy Wait
	// nativePolicy is the generic policy that is the strategy's own wait, set by its
	// constructor through newBaseWaiting (Info.NativeWait says why); Kind WaitNative = none
	// of them is: native then, or lockbench's default backoff while native is nil.
	nativePolicy Wait
	// native is the strategy's own wait under --wait native when none of the generic
	// policies is it (Redisson's lock channel); nil = the policy nativePolicy names. A
	// concrete type: through a func value, every attempt wait passes on would escape.
	native *nativeWaiter
	// holds counts the leases each owner holds per lock in this process, for a reentrant
	// strategy (Info.Reentrant): a holder's nested acquire tries at once, never queues behind
	// the local waiters for the lock it holds (holding). nil for the others.
	holds *holdCounter

	// releasePause is Hooks.ReleasePause as the common release runs it, before the release's
	// first command (lease.Release, redlockLease.Release). get-del clears it: its pause
	// belongs between its GET and its DEL, where it runs the hook itself.
	releasePause func(ctx context.Context, key, owner string)
	// delayedRetry: an attempt's retryIn is a random delay that every wait policy waits on
	// top of its own pause before the next attempt (redlock after a split vote; see pause),
	// rather than, as for the others, how long the holder's lease still runs, which only
	// bounds a pubsub waiter's sleep.
	delayedRetry bool
	// redissonBackoff: waits follow RedissonSpinLock's exponential backoff (redissonBackoff),
	// whatever the wait policy.
	redissonBackoff bool

	renewals, renewFailures, failedAttempts, unreplicated atomic.Uint64
}

// newBase is newBaseWaiting for a strategy none of whose generic policies is its own wait:
// under --wait native it waits with b.native once its constructor sets it, else with
// lockbench's default backoff.
func newBase(info Info, o *resolved, notifyVia rueidis.Client) (*base, error) {
	return newBaseWaiting(info, o, notifyVia, Wait{})
}

// newBaseWaiting makes the base of a strategy whose own wait, under --wait native, is the
// generic policy native (Kind WaitNative: none; see newBase).
func newBaseWaiting(info Info, o *resolved, notifyVia rueidis.Client, native Wait) (*base, error) {
	b := &base{info: info, o: o, releasePause: o.Hooks.ReleasePause, nativePolicy: native, policy: o.Wait}
	if o.Wait.Kind == WaitNative {
		b.policy = native
		if native.Kind == WaitNative {
			b.policy = Wait{Kind: WaitBackoff}
		}
		b.policy = b.policy.withDefaults()
	}
	if info.Reentrant {
		b.holds = newHoldCounter()
	}
	if b.policy.Kind == WaitPubSub {
		n, err := newNotifier(notifyVia, o.patienceArg)
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

// channel is where this process's waiters for key are told it is their turn, for the pubsub
// wait policy; "" without it.
func (b *base) channel(key string) string {
	if b.notify == nil {
		return ""
	}
	return b.notify.turnChannel(key)
}

// releaseChannel is where the fair lock addresses the waiter it handed the lock to.
func releaseChannel(key string) string { return "lockbench:released:" + key }

// attempt is one try at a lock: a lease when acquired, (nil, nil) when someone else holds it.
// retryIn, when > 0, is how long the holder's lease still runs (PTTL), which bounds how long a
// pubsub waiter sleeps before trying again without a message.
type attempt func(ctx context.Context) (l Lease, retryIn time.Duration, err error)

// acquire runs try until it yields a lease or ctx ends, waiting per the wait policy between
// attempts. The uncontended path is one call of try: no timer, no subscription.
func (b *base) acquire(ctx context.Context, key, owner string, try attempt) (Lease, error) {
	if b.o.WaitReplicas == 0 {
		return b.wait(ctx, key, owner, try)
	}
	return b.acquireOnReplicas(ctx, key, owner, try)
}

// acquireOnReplicas is acquire with WaitReplicas: a loop whose frame is not under the
// waits of an acquire that asks for no replicas (see wait).
//
//go:noinline
func (b *base) acquireOnReplicas(ctx context.Context, key, owner string, try attempt) (Lease, error) {
	for {
		l, err := b.wait(ctx, key, owner, try)
		if l == nil {
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

// onceAcquirer is a strategy whose acquire is one queued attempt (fair, redisson-fair).
type onceAcquirer interface {
	acquireOnce(ctx context.Context, key, owner string) (Lease, error)
}

// acquireReplicated runs s's queued acquire until its lease is on WaitReplicas replicas (at
// once when none are asked for); a grant the replicas do not confirm is given back, to the
// next in line, and s queues again.
func (b *base) acquireReplicated(ctx context.Context, s onceAcquirer, key, owner string) (Lease, error) {
	for {
		l, err := s.acquireOnce(ctx, key, owner)
		if l == nil || b.o.WaitReplicas == 0 || b.replicate(ctx, l.(*lease)) {
			return l, err
		}
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
//
// Its frame is under every command of an acquire, and with it of every worker's deepest
// wait (inside rueidis, in a select on the reply): it holds only the first attempt, and the
// pubsub registration and the pauses live in frames of their own (waitNotified, retry).
// Together they took 544 bytes here, and grew a 100,000-worker fleet's stacks from 4 KiB
// to 8 KiB (docs/performance.md, session 7).
func (b *base) wait(ctx context.Context, key, owner string, try attempt) (Lease, error) {
	if err := checkKey(key); err != nil {
		return nil, err
	}
	if b.native != nil && b.o.Wait.Kind == WaitNative {
		return b.native.wait(b, ctx, key, try)
	}
	if b.notify != nil {
		return b.notified(ctx, key, owner, try)
	}
	l, in, err := b.attempt(ctx, try)
	if l != nil || err != nil {
		return l, b.attemptErr(ctx, key, err)
	}
	return b.retry(ctx, key, nil, try, in)
}

// notified is wait with pubsub: queued behind this process's waiters (queueBehind), the
// first attempt, registered and subscribed (register), perhaps one attempt more, then the
// pauses (retry). The attempts run here, in a small frame, not under queueBehind's or
// register's: every command of every attempt, and with it a worker's deepest wait, lies
// under this frame (a 10,000-worker pubsub fleet's stacks grew past 8 KiB with the
// registration's frame there; in 2026-11, with the attempts inside it, most workers of
// every pubsub strategy but token still grew to 8 KiB).
//
//go:noinline
func (b *base) notified(ctx context.Context, key, owner string, try attempt) (l Lease, err error) {
	w, err := b.queueBehind(key, owner)
	var in time.Duration
	if err == nil && (w == nil || w.ahead == 0) {
		l, in, err = b.attempt(ctx, try)
	}
	if l == nil && err == nil {
		var again bool
		if w, again, l, err = b.register(ctx, key, owner, w); again {
			b.failedAttempts.Add(1)
			l, in, err = b.attempt(ctx, try)
		}
	}
	switch {
	case l == nil && err == nil:
		l, err = b.retry(ctx, key, w, try, in)
	case err != nil:
		err = b.attemptErr(ctx, key, err)
	}
	if w != nil {
		b.leave(w) // not deferred: a defer's record would sit in this frame too
	}
	return l, err
}

// queueBehind queues a waiter for key behind this process's waiters for it, if any wait: so
// that only the head contends with Redis. A holder's re-entry does not: they wait for the
// lock it holds, and only its own release would wake them. w is nil when nobody waits.
//
//go:noinline
func (b *base) queueBehind(key, owner string) (w *waiter, err error) {
	if b.notify.waiting(key) && !b.holding(key, owner) {
		return b.notify.enter(key, b.channel(key), "", owner)
	}
	return nil, nil
}

// register makes sure w is registered (queued late when queueBehind did not) and its
// channel subscribed. A release announced between the attempt and the registration (or
// before the subscription was confirmed) reached nobody: again says to try once more
// before sleeping, unless the lock was handed over meanwhile (l).
//
//go:noinline
func (b *base) register(ctx context.Context, key, owner string, w *waiter) (_ *waiter, again bool, l Lease, err error) {
	registeredLate := w == nil
	if registeredLate {
		if w, err = b.notify.enter(key, b.channel(key), "", owner); err != nil {
			return nil, false, nil, err
		}
	}
	if !w.covered {
		if err := b.notify.subscribe(ctx, w); err != nil {
			return w, false, nil, err
		}
	}
	if registeredLate || !w.covered {
		if l := b.notify.take(w); l != nil {
			return w, false, l, nil // handed over while it subscribed
		}
		return w, true, nil, nil
	}
	return w, false, nil, nil
}

// retry pauses and tries again until try yields a lease or ctx ends; w, when set, is the
// registration a release of this process wakes (pubsub).
//
//go:noinline
func (b *base) retry(ctx context.Context, key string, w *waiter, try attempt, retryIn time.Duration) (Lease, error) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	var slept time.Duration // the last pause
	end := waitEnd(ctx)     // the phase's end (WithWaitEnd): it ends a pause, never a command
	for n := 0; ; n++ {
		b.failedAttempts.Add(1)
		if b.redissonBackoff {
			slept = redissonBackoff(n, slept)
		} else {
			slept = b.pause(n, retryIn)
		}
		timedOut, err := b.sleep(ctx, end, timer, slept, w, key)
		if err != nil {
			return nil, err
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
		if timedOut && w != nil {
			b.notify.rejoin(ctx, w) // no turn came for a whole pause: make sure one can
		}
	}
}

// sleep is retry's pause: until the timer, a wake-up of w (pubsub), ctx's end or the phase's
// (end). timedOut: the timer ended it. A frame of its own: the select's cases would
// otherwise lie in retry's frame, under every command of every attempt after the first.
//
//go:noinline
func (b *base) sleep(ctx context.Context, end <-chan struct{}, timer *time.Timer, d time.Duration, w *waiter, key string) (timedOut bool, err error) {
	timer.Reset(d)
	var wake <-chan struct{}
	if w != nil {
		wake = w.wake
	}
	select {
	case <-ctx.Done():
		return false, notAcquired(ctx, key)
	case <-end:
		return false, waitEndedErr(key)
	case <-timer.C:
		return true, nil
	case <-wake:
		return false, nil
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

// Results of turn.lua.
const (
	turnNotOwner  = 0 // the lock did not hold the token
	turnElsewhere = 1 // released; another process has the turn
	turnHanded    = 2 // released to the token given for a local waiter
	turnOurs      = 3 // released; the turn is this process's: wake a local waiter
	turnNobody    = 4 // released; no process took the turn: wake a local waiter if one came
)

// releaseTurn releases the lock name (stored under key) and passes the turn for the pubsub
// wait policy in one script (turn.lua): compare-and-delete when tok is set, a blind DEL
// when it is "", or a hand-over to the token handoff, for the waiter of this process
// reserved for it, when the turn is this process's — or at once, without passing the turn
// round, when keep says the process's turn lasts (turnStreak).
func (b *base) releaseTurn(ctx context.Context, c rueidis.Client, name, key, tok, handoff string, keep bool) (int64, error) {
	keys, args := b.turnCall(name, key, tok, handoff, keep)
	return turnScript.ExecInt64(ctx, c, keys, args)
}

// turnCall is releaseTurn's keys and arguments, built in a frame of their own and kept on
// the heap. Built in releaseTurn they took 424 bytes of its frame, which lies under the
// script's wait for its reply, the deepest point of a pubsub release: a release handing
// over (releaseTo) then needed more than a worker's 4 KiB stack when rueidis's queue was
// contended, and a third of a 3,000-worker fleet's stacks grew to 8 KiB
// (TestCyclingWorkersKeepTheirStacks; base.wait says why that matters).
//
//go:noinline
func (b *base) turnCall(name, key, tok, handoff string, keep bool) (keys, args []string) {
	ch := b.notify.turnChannel(name)
	all := append(make([]string, 0, 9), waitList(name), key)
	args = append(b.appendTurnArgs(all[2:], ch, handoff != "" || b.notify.hasWaiters(ch)), tok, handoff)
	if keep {
		args = append(args, "1")
	}
	return all[:2:2], args
}

// turnArgs are turn.lua's first arguments for this process's turn channel ch, local saying
// whether a waiter of this process may take the turn; with room for three more.
func (b *base) turnArgs(ch string, local bool) []string {
	return b.appendTurnArgs(make([]string, 0, 7), ch, local)
}

// appendTurnArgs appends turnArgs to dst.
func (b *base) appendTurnArgs(dst []string, ch string, local bool) []string {
	l := ""
	if local {
		l = "1"
	}
	return append(dst, ch, l, b.notify.counted, b.notify.ttlArg)
}

// turned acts on what releaseTurn returned: on this process's turn its next waiter for name
// is woken; on another's, nobody here is (they would barge in on the process addressed).
func (b *base) turned(name string, r int64) error {
	switch r {
	case turnNotOwner:
		return ErrNotOwner
	case turnOurs:
		if b.notify.released(name, b.notify.turnChannel(name)) {
			runtime.Gosched()
		}
	case turnNobody:
		// Nobody waited when the release looked, but a waiter of this process may have
		// registered, and failed its last try, before the release ran: without this wake
		// it would sleep until its timer (the ttl).
		b.notify.wakeLocal(b.notify.turnChannel(name))
	}
	return nil
}

// blindDelete is the unlock of the naive strategies: DEL whatever the key holds (seeds 000,
// 003, 004 before their fixes). With the pubsub wait policy the DEL runs in turn.lua, which
// passes the turn on.
func (b *base) blindDelete(ctx context.Context, c rueidis.Client, name, key string) error {
	if b.notify == nil {
		return c.Do(ctx, c.B().Del().Key(key).Build()).Error()
	}
	r, err := b.releaseTurn(ctx, c, name, key, "", "", false)
	if err != nil {
		return err
	}
	return b.turned(name, r)
}

// pause is how long to sleep before retry n (0-based), retryIn being what the last attempt
// returned. With delayedRetry, spin and backoff wait retryIn on top of their own pause; pubsub
// already sleeps just retryIn when it is set.
func (b *base) pause(n int, retryIn time.Duration) time.Duration {
	w := b.policy
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
		return b.o.patience
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

// newToken makes a lease's token. Not inlined: its concatenation's buffer would stay in
// its caller's frame, under the acquire's command (see wait).
//
//go:noinline
func newToken(owner string) string {
	var digits [13]byte // a uint64 in base 36; converted inside the concatenation: one allocation
	return owner + ":" + tokenNonce + "." + string(strconv.AppendUint(digits[:0], tokenSeq.Add(1), 36))
}
