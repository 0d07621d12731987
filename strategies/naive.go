package strategies

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/rueidis"
)

// naive holds what the seeds' early locks share: one key, released by a blind DEL.
type naive struct {
	*base
	c rueidis.Client
}

func newNaive(info Info, o *resolved) (*naive, error) {
	b, err := newBaseWaiting(info, o, o.Client, articleLoop)
	if err != nil {
		return nil, err
	}
	return &naive{base: b, c: o.Client}, nil
}

func (s *naive) release(ctx context.Context, l *lease) error {
	return s.blindDelete(ctx, s.c, l.name, l.key)
}

func (s *naive) renew(context.Context, *lease) (bool, error) { return false, errNoRenew }

// stale reports whether a timestamp lock value is older than the ttl by the client's clock
// (now, in Unix ms): what both timestamp locks of seed 000 decide on.
func (s *naive) stale(value string, now int64) (bool, error) {
	then, err := strconv.ParseInt(value, 10, 64)
	if err != nil {
		return false, fmt.Errorf("lock value %q is not a timestamp: %w", value, err)
	}
	return now-then >= s.o.ttlMS, nil
}

func (s *naive) lease(key, owner string) Lease { return s.newLease(s, key, key, owner, owner, 0) }

// getset is seed 000 §1: GETSET key now. No previous value, or one older than the timeout
// (our ttl), means the lock is ours. The key never expires in Redis; staleness is judged by
// the client's clock, and every failed attempt overwrites the holder's timestamp with the
// loser's, so while contenders keep trying a dead holder's lock never turns stale. Two
// clients whose clocks disagree by more than the timeout both "take over"; the unlock is a
// blind DEL.
type getset struct{ *naive }

func (s *getset) Acquire(ctx context.Context, key, owner string) (Lease, error) {
	return s.acquire(ctx, key, owner, func(ctx context.Context) (Lease, time.Duration, error) {
		now := s.o.now(ctx).UnixMilli()
		old, err := s.c.Do(ctx, s.c.B().Getset().Key(key).Value(strconv.FormatInt(now, 10)).Build()).ToString()
		if rueidis.IsRedisNil(err) {
			return s.lease(key, owner), 0, nil
		}
		if err != nil {
			return nil, 0, err
		}
		if stale, err := s.stale(old, now); !stale || err != nil {
			return nil, 0, err
		}
		return s.lease(key, owner), 0, nil // stale: take over
	})
}

// setnxExpire is the first lock of seed 003: SETNX, then EXPIRE, as two commands. A client
// that dies between them leaves a lock that never expires. (PEXPIRE rather than EXPIRE so
// that sub-second ttls are not truncated to nothing.) With NoTTL it sends no EXPIRE at all,
// the lock the seed starts from: a holder that dies keeps it for good.
type setnxExpire struct{ *naive }

func (s *setnxExpire) Acquire(ctx context.Context, key, owner string) (Lease, error) {
	return s.acquire(ctx, key, owner, func(ctx context.Context) (Lease, time.Duration, error) {
		// SETNX and EXPIRE run to the end whatever the caller's deadline: a client that gave
		// up waiting while its SETNX was on the wire, or between the two commands, must not
		// leave a lock without a ttl behind. Only a client that dies does (the hook below):
		// that is the seed's hazard, and the one the crash faults measure.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), expireTimeout)
		defer cancel()
		won, err := s.c.Do(cctx, s.c.B().Setnx().Key(key).Value(owner).Build()).AsBool()
		if !won || err != nil {
			return nil, 0, err
		}
		if hook := s.o.Hooks.AfterSetNX; hook != nil {
			if err := hook(ctx, key, owner); err != nil {
				return nil, 0, fmt.Errorf("%w between SETNX and EXPIRE: %w", ErrCrashed, err)
			}
		}
		if s.o.TTL.None() {
			return s.lease(key, owner), 0, nil
		}
		if err := s.c.Do(cctx, s.c.B().Pexpire().Key(key).Milliseconds(s.o.ttlMS).Build()).Error(); err != nil {
			return nil, 0, err // the lock stays, without a ttl: exactly the seed's hazard
		}
		return s.lease(key, owner), 0, nil
	})
}

// expireTimeout bounds setnx-expire's SETNX and EXPIRE.
const expireTimeout = 5 * time.Second

// setnxStale is seed 000 §2: SET key now NX PX expire; when that fails, GET the holder's
// timestamp and, if the client's clock says it is older than the expiry, try again at once.
// The check is racy and trusts client clocks: a client whose clock runs ahead judges a live
// lock stale and spins on SET/GET until Redis expires it.
type setnxStale struct{ *naive }

func (s *setnxStale) Acquire(ctx context.Context, key, owner string) (Lease, error) {
	return s.acquire(ctx, key, owner, func(ctx context.Context) (Lease, time.Duration, error) {
		for {
			now := s.o.now(ctx).UnixMilli()
			ok, err := setNX(ctx, s.c, key, strconv.FormatInt(now, 10), s.o.ttlMS)
			if ok || err != nil {
				if ok {
					return s.lease(key, owner), 0, nil
				}
				return nil, 0, err
			}
			old, err := s.c.Do(ctx, s.c.B().Get().Key(key).Build()).ToString()
			if rueidis.IsRedisNil(err) {
				return nil, 0, nil // released in between: the seed gives up this round
			}
			if err != nil {
				return nil, 0, err
			}
			if stale, err := s.stale(old, now); !stale || err != nil {
				return nil, 0, err
			}
			// "stale": the seed's do-while retries immediately, with no pause.
			s.failedAttempts.Add(1)
			if ctx.Err() != nil {
				return nil, 0, ctx.Err()
			}
		}
	})
}

// articleLoop is the articles' own wait, their locks' native one (Info.NativeWait): try
// again at once, for as long as the caller waits. The seeds that show a retry show it
// without a pause: seed 000's clients "keep retrying" (000 l.98) and its setnx lock's
// do-while retries at once (l.117-143); seed 002's waiter "enters a while loop, trying
// without stop" (002 l.133). Seeds 001, 003 and 004 show a single try (tryLock returns at
// once: 004 l.58-78, 001 l.60), for which the same loop is the one a caller writes around it
// when it must have the lock; lockbench adds no pause of its own.
var articleLoop = Wait{Kind: WaitSpin}
