package strategies

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/redis/rueidis"
)

// redlock is the Redlock algorithm (seed 003): take the same token lock on N independent
// masters, and hold it when a majority granted it within its validity, ttl - elapsed -
// (ttl*drift + 2ms); otherwise undo it everywhere. Release deletes it on every node.
// Its known hazards: a node that restarts without persistence forgets the locks it granted,
// clock jumps on the nodes shorten leases, and a pause past the validity is undetected.
type redlock struct {
	*base
	nodes  []rueidis.Client
	quorum int
}

func newRedlock(info Info, o *resolved) (Strategy, error) {
	// With the pubsub wait policy releases are announced on, and awaited from, the first node;
	// if it is down, waiters fall back to their timers.
	b, err := newBaseWaiting(info, o, o.Nodes[0], articleLoop)
	if err != nil {
		return nil, err
	}
	b.delayedRetry = true // an attempt's retryIn is splitVoteDelay, for every wait policy
	return &redlock{base: b, nodes: o.Nodes, quorum: len(o.Nodes)/2 + 1}, nil
}

func (s *redlock) Acquire(ctx context.Context, key, owner string) (Lease, error) {
	return s.acquire(ctx, key, owner, func(ctx context.Context) (Lease, time.Duration, error) {
		return s.attempt(ctx, key, owner)
	})
}

// attempt is one round of the algorithm. After a round that granted the lock somewhere but
// won no majority in time (a split vote, or a majority past its validity), retryIn is a
// random delay (splitVoteDelay) the next round waits for under every wait policy: on top of
// the spin or backoff pause, and in place of pubsub's ttl-long fallback timer, since nobody
// holds a majority and no release will be announced. A round that no node granted found the
// lock held and waits per the policy alone, like any other strategy; natively (--wait
// native), it too waits the random delay, as the algorithm says ("retry after a random
// delay"), and nothing else.
func (s *redlock) attempt(ctx context.Context, key, owner string) (Lease, time.Duration, error) {
	tok := newToken(owner)
	sent := time.Now() // the real clock, whatever the fault layer makes s.o.now read
	start := s.o.now(ctx)
	granted, failed, firstErr := s.lockAll(ctx, key, tok)
	elapsed := s.o.now(ctx).Sub(start)
	drift := time.Duration(float64(s.o.ttl)*s.o.DriftFactor) + 2*time.Millisecond
	if validity := s.o.ttl - elapsed - drift; granted >= s.quorum && validity > 0 {
		return &redlockLease{s: s, name: key, owner: owner, token: tok, until: sent.Add(s.o.ttl - drift)}, 0, nil
	}
	// Undo the partial lock so that it does not block others until it expires.
	uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.o.NodeTimeout)
	s.unlockAll(uctx, key, tok, false)
	cancel()
	if granted == 0 && failed > len(s.nodes)-s.quorum {
		return nil, 0, fmt.Errorf("no majority reachable: %d of %d nodes failed: %w", failed, len(s.nodes), firstErr)
	}
	if granted > 0 || s.o.Wait.Kind == WaitNative {
		// Natively (articleLoop, with no pause of its own), every failed round waits the
		// random delay: the algorithm's "retry after a random delay".
		return nil, splitVoteDelay(elapsed), nil
	}
	return nil, 0, nil
}

// Bounds of splitVoteDelay's random spread.
const (
	minSplitVoteSpread = 5 * time.Millisecond
	maxSplitVoteSpread = 50 * time.Millisecond
)

// splitVoteDelay is how long a contender waits, beyond its wait policy, after a round of
// elapsed that ended in a split vote: 1ms plus a uniform random time below twice elapsed,
// the spread clamped to [5ms, 50ms]. Contenders that split the vote ran their rounds at
// the same time; retrying after different random delays (Antirez: "retry after a random
// delay in order to try to desynchronize multiple clients") spreads them over two round
// lengths, so that a second collision is unlikely, at a cost of a few ms — small against
// any ttl. The clamp keeps a clock jump or a dead node's NodeTimeout from turning elapsed
// into a long stall.
func splitVoteDelay(elapsed time.Duration) time.Duration {
	return time.Millisecond + rand.N(min(max(2*elapsed, minSplitVoteSpread), maxSplitVoteSpread))
}

// lockAll asks the nodes in turn, as the algorithm and seed 003 describe, each bounded by
// NodeTimeout, and counts the grants and the nodes that failed (errors and timeouts, as
// opposed to "taken"). In turn rather than at once: goroutines per node and attempt would
// cost 5 per contender — 50,000 goroutines at 10,000 workers — and the elapsed time the
// validity subtracts is what asking in turn takes. It stops as soon as a majority is out
// of reach: the remaining nodes could not change the outcome.
func (s *redlock) lockAll(ctx context.Context, key, tok string) (granted, failed int, firstErr error) {
	refused := 0
	for _, c := range s.nodes {
		if refused+failed > len(s.nodes)-s.quorum {
			break
		}
		nctx, cancel := context.WithTimeout(ctx, s.o.NodeTimeout)
		ok, err := setNX(nctx, c, key, tok, s.o.ttlMS)
		cancel()
		switch {
		case err != nil:
			failed++
			if firstErr == nil {
				firstErr = err
			}
		case ok:
			granted++
		default:
			refused++
		}
		if ctx.Err() != nil {
			break
		}
	}
	return granted, failed, firstErr
}

// unlockAll runs compare-and-delete on every node in turn and counts the nodes where the
// lock was still ours. With turn (and the pubsub wait policy) the first node's release passes
// the turn on (turn.lua); turned is then what turn.lua answered (0 without it).
func (s *redlock) unlockAll(ctx context.Context, key, tok string, turn bool) (held int, turned int64, firstErr error) {
	for i, c := range s.nodes {
		nctx, cancel := context.WithTimeout(ctx, s.o.NodeTimeout)
		var err error
		if i == 0 && turn && s.notify != nil {
			var r int64
			if r, err = s.releaseTurn(nctx, c, key, key, tok, "", false); err == nil {
				turned = r
				if r == turnNotOwner {
					err = ErrNotOwner
				}
			}
		} else {
			err = compareDelete(nctx, c, key, tok)
		}
		cancel()
		switch {
		case err == nil:
			held++
		case !errors.Is(err, ErrNotOwner) && firstErr == nil:
			firstErr = err
		}
	}
	return held, turned, firstErr
}

type redlockLease struct {
	s                  *redlock
	name, owner, token string
	until              time.Time // the lock's validity on the majority, by the real clock
	released           atomic.Bool
}

// ValidUntil is when the majority's locks may start to expire: the ttl, less the drift the
// algorithm allows for, from the start of the round that took them.
func (l *redlockLease) ValidUntil() time.Time { return l.until }

// Release deletes the lock on every node, after Hooks.ReleasePause. It reports ErrNotOwner
// when fewer than a majority still held it: the lock had been lost before the release.
func (l *redlockLease) Release(ctx context.Context) error {
	if !l.released.CompareAndSwap(false, true) {
		return fmt.Errorf("%w: key %s", ErrReleased, l.name)
	}
	if pause := l.s.releasePause; pause != nil {
		pause(ctx, l.name, l.owner)
	}
	held, turned, err := l.s.unlockAll(ctx, l.name, l.token, true)
	if held >= l.s.quorum {
		if turned == turnOurs || turned == turnNobody {
			_ = l.s.turned(l.name, turned)
		}
		return nil
	}
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("redlock: release key %s: held on %d of %d nodes: %w", l.name, held, len(l.s.nodes), err)
	}
	return fmt.Errorf("redlock: release key %s: held on %d of %d nodes: %w", l.name, held, len(l.s.nodes), ErrNotOwner)
}

func (l *redlockLease) Fence() uint64         { return 0 }
func (l *redlockLease) Lost() <-chan struct{} { return nil }
