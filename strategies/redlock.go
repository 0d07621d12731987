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
	b, err := newBase(info, o, o.Nodes[0])
	if err != nil {
		return nil, err
	}
	return &redlock{base: b, nodes: o.Nodes, quorum: len(o.Nodes)/2 + 1}, nil
}

func (s *redlock) Acquire(ctx context.Context, key, owner string) (Lease, error) {
	return s.acquire(ctx, key, owner, func(ctx context.Context) (Lease, time.Duration, error) {
		tok := newToken(owner)
		start := s.o.now(ctx)
		granted, failed, firstErr := s.lockAll(ctx, key, tok)
		elapsed := s.o.now(ctx).Sub(start)
		drift := time.Duration(float64(s.o.TTL)*s.o.DriftFactor) + 2*time.Millisecond
		if validity := s.o.TTL - elapsed - drift; granted >= s.quorum && validity > 0 {
			return &redlockLease{s: s, name: key, owner: owner, token: tok}, 0, nil
		}
		// Undo the partial lock so that it does not block others until it expires.
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.o.NodeTimeout)
		s.unlockAll(uctx, key, tok, "", "")
		cancel()
		if granted == 0 && failed > len(s.nodes)-s.quorum {
			return nil, 0, fmt.Errorf("no majority reachable: %d of %d nodes failed: %w", failed, len(s.nodes), firstErr)
		}
		if granted > 0 {
			// A split vote: nobody holds a majority, so no release will ever be announced.
			// The algorithm retries after a random delay, so that contenders stop colliding.
			return nil, time.Millisecond + rand.N(max(2*elapsed, 5*time.Millisecond)), nil
		}
		return nil, 0, nil
	})
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
// lock was still ours. channel, when set, is announced (with payload) on the first node.
func (s *redlock) unlockAll(ctx context.Context, key, tok, channel, payload string) (held int, firstErr error) {
	for i, c := range s.nodes {
		ch := ""
		if i == 0 {
			ch = channel
		}
		nctx, cancel := context.WithTimeout(ctx, s.o.NodeTimeout)
		err := compareDelete(nctx, c, key, tok, ch, payload)
		cancel()
		switch {
		case err == nil:
			held++
		case !errors.Is(err, ErrNotOwner) && firstErr == nil:
			firstErr = err
		}
	}
	return held, firstErr
}

type redlockLease struct {
	s                  *redlock
	name, owner, token string
	released           atomic.Bool
}

// Release deletes the lock on every node. It reports ErrNotOwner when fewer than a majority
// still held it: the lock had been lost before the release.
func (l *redlockLease) Release(ctx context.Context) error {
	if !l.released.CompareAndSwap(false, true) {
		return fmt.Errorf("%w: key %s", ErrReleased, l.name)
	}
	ch, payload := l.s.announce(l.name)
	held, err := l.s.unlockAll(ctx, l.name, l.token, ch, payload)
	if held >= l.s.quorum {
		l.s.releasedLocally(l.name)
		return nil
	}
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("redlock: release key %s: held on %d of %d nodes: %w", l.name, held, len(l.s.nodes), err)
	}
	return fmt.Errorf("redlock: release key %s: held on %d of %d nodes: %w", l.name, held, len(l.s.nodes), ErrNotOwner)
}

func (l *redlockLease) Fence() uint64         { return 0 }
func (l *redlockLease) Lost() <-chan struct{} { return nil }
