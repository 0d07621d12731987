package strategies

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/rueidis"
)

// Redisson's own waiting (redisson-4.7.0), for the Redisson family under --wait native:
//
//   - RedissonLock.tryLock(waitTime, leaseTime) (RedissonLock.java lines 227-311): try first
//     (a waiter barges in on a free lock, and a holder's re-entry never waits); subscribe to
//     the lock's channel; then loop: try, and sleep on the channel's latch at most the ttl
//     the script returned when it is below the time left, else the time left.
//     RedissonSemaphore.tryAcquire(permits, waitTime) (RedissonSemaphore.java lines 287-353)
//     is the same loop without a ttl: it sleeps the time left; RedissonPermitExpirableSemaphore
//     (lines 445-513) sleeps at most until the nearest permit's lease ends.
//   - One subscription per channel per client, shared by every waiter of the process
//     (PublishSubscribe.subscribe/unsubscribe, pubsub/PublishSubscribe.java lines 44-129):
//     the first waiter SUBSCRIBEs, the last one to leave UNSUBSCRIBEs.
//   - The latch is a counting semaphore that starts at 0 (RedissonLockEntry). LockPubSub
//     (pubsub/LockPubSub.java lines 42-52): UNLOCK_MESSAGE (0) adds one permit, which wakes one
//     waiter, or the next to sleep when nobody sleeps yet; READ_UNLOCK_MESSAGE (1) adds as
//     many as there are sleepers, waking them all. SemaphorePubSub (pubsub/SemaphorePubSub.java
//     lines 39-43): a release message carrying the free count n adds min(subscribers, n).
//
// Each process (each strategy instance: lockbench's processes each build their own) has its
// own subscriptions, so that every unlock message wakes one waiter in every subscribed process.

// redissonMessages is how a channel's messages open its latch.
type redissonMessages int

const (
	lockMessages      redissonMessages = iota // LockPubSub
	semaphoreMessages                         // SemaphorePubSub
)

// redissonPubSub is one process's subscriptions to Redisson's channels (PublishSubscribe).
type redissonPubSub struct {
	src  rueidis.Client
	kind redissonMessages

	mu      sync.Mutex
	conn    rueidis.DedicatedClient
	free    func()
	broken  bool
	closed  bool
	entries map[string]*redissonEntry

	messages, subscribes atomic.Uint64
}

// redissonEntry is RedissonLockEntry: the latch of one channel and the count of its
// subscribers.
type redissonEntry struct {
	ch      string
	refs    int           // subscribers (RedissonLockEntry.counter); under the pubsub's mu
	ready   chan struct{} // closed once Redis confirmed the SUBSCRIBE
	left    chan struct{} // set when the last subscriber left; closed once UNSUBSCRIBE was answered
	latchMu sync.Mutex
	permits int
	sleep   []chan struct{} // sleepers, FIFO (java.util.concurrent.Semaphore's queue)
}

func newRedissonPubSub(c rueidis.Client, kind redissonMessages) *redissonPubSub {
	return &redissonPubSub{src: subscribeNode(c), kind: kind, entries: map[string]*redissonEntry{}}
}

var errRedissonPubSubClosed = errors.New("redisson pubsub closed")

// subscribe joins ch's subscription, subscribing the channel when nobody of this process
// does yet, and returns once Redis confirmed it.
func (p *redissonPubSub) subscribe(ctx context.Context, ch string) (*redissonEntry, error) {
	p.mu.Lock()
	for e := p.entries[ch]; e != nil && e.left != nil; e = p.entries[ch] {
		// Its UNSUBSCRIBE is on its way: subscribe after it, as Redisson's per-channel
		// semaphore orders them (PublishSubscribeService.getSemaphore).
		left := e.left
		p.mu.Unlock()
		select {
		case <-left:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		p.mu.Lock()
	}
	if p.closed {
		p.mu.Unlock()
		return nil, errRedissonPubSubClosed
	}
	e := p.entries[ch]
	first := e == nil
	if first {
		e = &redissonEntry{ch: ch, ready: make(chan struct{})}
		p.entries[ch] = e
	}
	e.refs++
	var conn rueidis.DedicatedClient
	var resubscribe []string
	var stale func()
	if first {
		conn, resubscribe, stale = p.connectLocked()
	}
	p.mu.Unlock()
	if stale != nil {
		stale()
	}
	if first {
		p.subscribes.Add(1)
		cmds := rueidis.Commands{conn.B().Subscribe().Channel(ch).Build()}
		if len(resubscribe) > 0 {
			cmds = append(cmds, conn.B().Subscribe().Channel(resubscribe...).Build())
		}
		sctx, cancel := context.WithTimeout(context.Background(), subscribeTimeout)
		for _, r := range conn.DoMulti(sctx, cmds...) {
			if err := r.Error(); err != nil {
				cancel()
				p.markBroken(conn)
				p.unsubscribe(e)
				return nil, err
			}
		}
		cancel()
	}
	select {
	case <-e.ready:
		return e, nil
	case <-ctx.Done():
		p.unsubscribe(e)
		return nil, ctx.Err()
	}
}

// connectLocked returns the subscription connection, opening one when there is none or the
// last one broke; then the channels to subscribe again on the new one, and the old one's
// release.
func (p *redissonPubSub) connectLocked() (conn rueidis.DedicatedClient, resubscribe []string, stale func()) {
	if p.conn != nil && !p.broken {
		return p.conn, nil, nil
	}
	stale = p.free
	conn, free := p.src.Dedicate()
	p.conn, p.free, p.broken = conn, free, false
	gone := conn.SetPubSubHooks(rueidis.PubSubHooks{
		OnMessage: p.onMessage,
		OnSubscription: func(s rueidis.PubSubSubscription) {
			if s.Kind != "subscribe" {
				return
			}
			p.mu.Lock()
			e := p.entries[s.Channel]
			p.mu.Unlock()
			if e != nil {
				select {
				case <-e.ready:
				default:
					close(e.ready)
				}
			}
		},
	})
	go func() {
		<-gone
		p.markBroken(conn)
	}()
	for ch, e := range p.entries {
		select {
		case <-e.ready:
			resubscribe = append(resubscribe, ch) // on the old connection: subscribe again
		default:
		}
	}
	return conn, resubscribe, stale
}

func (p *redissonPubSub) markBroken(conn rueidis.DedicatedClient) {
	p.mu.Lock()
	if p.conn == conn {
		p.broken = true
	}
	p.mu.Unlock()
}

// unsubscribe leaves e's subscription; the last to leave UNSUBSCRIBEs the channel, in the
// background (the waiter goes on, as Redisson's unsubscribe is asynchronous); a subscriber
// that comes meanwhile subscribes after it.
func (p *redissonPubSub) unsubscribe(e *redissonEntry) {
	p.mu.Lock()
	e.refs--
	if e.refs > 0 || p.entries[e.ch] != e {
		p.mu.Unlock()
		return
	}
	e.left = make(chan struct{})
	conn := p.conn
	broken := p.broken || p.closed
	p.mu.Unlock()
	go func() {
		if conn != nil && !broken {
			ctx, cancel := context.WithTimeout(context.Background(), subscribeTimeout)
			_ = conn.Do(ctx, conn.B().Unsubscribe().Channel(e.ch).Build()).Error()
			cancel()
		}
		p.mu.Lock()
		if p.entries[e.ch] == e {
			delete(p.entries, e.ch)
		}
		p.mu.Unlock()
		close(e.left)
	}()
}

func (p *redissonPubSub) onMessage(m rueidis.PubSubMessage) {
	p.mu.Lock()
	e := p.entries[m.Channel]
	refs := 0
	if e != nil {
		refs = e.refs
	}
	p.mu.Unlock()
	if e == nil {
		return
	}
	p.messages.Add(1)
	if p.kind == semaphoreMessages {
		n, err := strconv.Atoi(m.Message)
		if err == nil && n > 0 {
			e.release(min(refs, n))
		}
		return
	}
	switch m.Message {
	case redissonUnlockMessage:
		e.release(1)
	case redissonReadUnlockMessage:
		e.releaseSleepers()
	}
}

func (p *redissonPubSub) close() {
	p.mu.Lock()
	p.closed = true
	free := p.free
	p.conn, p.free = nil, nil
	p.mu.Unlock()
	if free != nil {
		free()
	}
}

// release adds n permits to the latch: each wakes the longest sleeper, or waits for the next.
func (e *redissonEntry) release(n int) {
	e.latchMu.Lock()
	defer e.latchMu.Unlock()
	for ; n > 0 && len(e.sleep) > 0; n-- {
		close(e.sleep[0])
		e.sleep = e.sleep[1:]
	}
	e.permits += n
}

// releaseSleepers wakes every sleeper (Semaphore.release(getQueueLength())).
func (e *redissonEntry) releaseSleepers() {
	e.latchMu.Lock()
	defer e.latchMu.Unlock()
	for _, s := range e.sleep {
		close(s)
	}
	e.sleep = nil
}

// await takes a permit of the latch, sleeping at most d for one (Semaphore.tryAcquire).
func (e *redissonEntry) await(ctx context.Context, d time.Duration) {
	e.latchMu.Lock()
	if e.permits > 0 {
		e.permits--
		e.latchMu.Unlock()
		return
	}
	if d <= 0 {
		e.latchMu.Unlock()
		return
	}
	wake := make(chan struct{})
	e.sleep = append(e.sleep, wake)
	e.latchMu.Unlock()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-wake:
		return
	case <-t.C:
	case <-ctx.Done():
	case <-waitEnd(ctx): // the phase's end (WithWaitEnd)
	}
	e.latchMu.Lock()
	defer e.latchMu.Unlock()
	for i, s := range e.sleep {
		if s == wake {
			e.sleep = append(e.sleep[:i], e.sleep[i+1:]...)
			return
		}
	}
	// Woken as the timer fired: the permit was ours, and is spent.
}

// redissonSleep is how long a waiter sleeps on the latch before its next try: n counts its
// retries (0-based), ttl is what the last try returned, left the time it has left.
type redissonSleep func(n int, ttl, left time.Duration) time.Duration

// sleepTTL is RedissonLock.tryLock's: the ttl the script returned when it is below the time
// left, else the time left (a ttl < 0, a lock without expiry, never bounds it).
func sleepTTL(_ int, ttl, left time.Duration) time.Duration {
	if ttl >= 0 && ttl < left {
		return ttl
	}
	return left
}

// sleepLeft is RedissonSemaphore.tryAcquire's: the time left; a ttl > 0 (the nearest
// permit's lease end, RedissonPermitExpirableSemaphore) bounds it.
func sleepLeft(_ int, ttl, left time.Duration) time.Duration {
	if ttl > 0 && ttl < left {
		return ttl
	}
	return left
}

// timeLeft is the waiter's time left: until ctx's deadline (tryLock(waitTime)), or without
// one forever (lock()).
func timeLeft(ctx context.Context) time.Duration {
	if dl, ok := ctx.Deadline(); ok {
		return time.Until(dl)
	}
	return math.MaxInt64
}

// tryLock is Redisson's wait loop over try, with ch the channel that announces a release:
// try; subscribe; then try and sleep on the latch (at most sleep's bound) until a try
// yields a lease or the time is up. It returns (nil, nil) when the time ran out, as
// tryLock returns false; every try after the first counts in failed.
func (p *redissonPubSub) tryLock(ctx context.Context, ch string, try attempt, sleep redissonSleep, failed *atomic.Uint64) (Lease, error) {
	l, ttl, err := try(ctx)
	if l != nil || err != nil {
		return l, err
	}
	if timeLeft(ctx) <= 0 || ctx.Err() != nil {
		return nil, nil
	}
	e, err := p.subscribe(ctx, ch)
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil // the time ran out while subscribing
		}
		return nil, err
	}
	defer p.unsubscribe(e)
	for n := 0; ; n++ {
		failed.Add(1)
		if l, ttl, err = try(ctx); l != nil || err != nil {
			return l, err
		}
		left := timeLeft(ctx)
		if left <= 0 || ctx.Err() != nil {
			return nil, nil
		}
		e.await(ctx, sleep(n, ttl, left))
		if timeLeft(ctx) <= 0 || ctx.Err() != nil || waitEnded(ctx) {
			return nil, nil // waitEnded: the phase ended (WithWaitEnd), as the time running out
		}
	}
}

// redissonNativeWait makes b wait as Redisson does under --wait native (base.native): on the
// channel channel(key) names, through this process's subscriptions ps, sleeping per sleep
// between tries. It returns nil when the wait policy is not native: the generic policies
// (lockbench's what-ifs) wait then.
func redissonNativeWait(b *base, c rueidis.Client, kind redissonMessages, channel func(key string) string, sleep redissonSleep) *redissonPubSub {
	if b.o.Wait.Kind != WaitNative {
		return nil
	}
	ps := newRedissonPubSub(c, kind)
	b.native = &nativeWaiter{ps: ps, channel: channel, sleep: sleep}
	return ps
}

// nativeWaiter is the Redisson family's own wait (base.native): a concrete type rather
// than a func value, so that the attempt base.wait hands it does not escape — through an
// indirect call every strategy's attempt closure went to the heap, one allocation per
// acquire (token's 3 -> 4).
type nativeWaiter struct {
	ps      *redissonPubSub
	channel func(key string) string
	sleep   redissonSleep
}

func (n *nativeWaiter) wait(b *base, ctx context.Context, key string, try attempt) (Lease, error) {
	stamped := func(ctx context.Context) (Lease, time.Duration, error) { return b.attempt(ctx, try) }
	l, err := n.ps.tryLock(ctx, n.channel(key), stamped, n.sleep, &b.failedAttempts)
	switch {
	case l != nil:
		return l, nil
	case err != nil:
		return nil, b.attemptErr(ctx, key, err)
	case ctx.Err() != nil:
		return nil, notAcquired(ctx, key)
	}
	return nil, fmt.Errorf("%w: key %s: %w", ErrNotAcquired, key, context.DeadlineExceeded)
}

// closePubSub ends ps's subscriptions (nil: none).
func closePubSub(ps *redissonPubSub) {
	if ps != nil {
		ps.close()
	}
}

// withPubSub adds ps's counts to a strategy's Stats.
func withPubSub(s Stats, ps *redissonPubSub) Stats {
	if ps != nil {
		s.Notifications += ps.messages.Load()
		s.Subscriptions += ps.subscribes.Load()
	}
	return s
}
