package strategies

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/redis/rueidis"
)

// token is the lock the seeds arrive at (seeds 003, 004): SET key uniqueToken NX PX ttl, and
// an unlock that compares the token and deletes in one Lua script. Without a watchdog a hold
// longer than the ttl (a GC pause, seed 004) lets a second holder in.
type token struct {
	*base
	c rueidis.Client
	// handsOver: with the pubsub wait policy, a release acquires the lock for the next local
	// waiter in the same round trip (releaseTo). Off for strategies that reuse token's
	// release but acquire differently (fenced).
	handsOver bool
}

func newTokenStrategy(info Info, o *resolved) (Strategy, error) {
	b, err := newBaseWaiting(info, o, o.Client, articleLoop)
	if err != nil {
		return nil, err
	}
	return &token{base: b, c: o.Client, handsOver: b.notify != nil}, nil
}

func (s *token) Acquire(ctx context.Context, key, owner string) (Lease, error) {
	return s.acquireToken(ctx, s.c, s, key, owner)
}

// acquireToken is token's acquire, which get-del shares: SET key uniqueToken NX PX ttl, as
// a lease that ops releases.
func (b *base) acquireToken(ctx context.Context, c rueidis.Client, ops leaseOps, key, owner string) (Lease, error) {
	return b.acquire(ctx, key, owner, func(ctx context.Context) (Lease, time.Duration, error) {
		tok := newToken(owner)
		ok, err := setNXArg(ctx, c, key, tok, b.o.ttlArg)
		if !ok || err != nil {
			return nil, 0, err
		}
		return b.newLease(ops, key, key, owner, tok, 0), 0, nil
	})
}

func (s *token) release(ctx context.Context, l *lease) error {
	if s.notify == nil {
		return compareDelete(ctx, s.c, l.key, l.token)
	}
	if s.handsOver {
		if w, keep := s.reserveNext(l.name); w != nil {
			return s.releaseTo(ctx, l, w, keep)
		}
	}
	r, err := s.releaseTurn(ctx, s.c, l.name, l.key, l.token, "", false)
	if err != nil {
		return err
	}
	return s.turned(l.name, r)
}

// reserveNext reserves the next local waiter for lock name, if any, for releaseTo. Its
// channel's name is built here, out of release's frame (see base.turnCall).
//
//go:noinline
func (s *token) reserveNext(name string) (w *waiter, keep bool) {
	return s.notify.reserveNext(s.channel(name))
}

// releaseTo releases l and, when the turn is this process's (no other process waits, or the
// others had theirs), acquires the lock for w, a waiter of this process, in the same script:
// SET with w's own token instead of the DEL. The handoff costs one round trip instead of two
// (release, wake w, w's acquire). When another process has the turn, w waits on, not woken.
// keep continues this process's turn (see turnStreak): w gets the lock whoever else waits.
func (s *token) releaseTo(ctx context.Context, l *lease, w *waiter, keep bool) error {
	tok := newToken(w.owner)
	r, err := s.releaseTurn(ctx, s.c, l.name, l.key, l.token, tok, keep)
	return s.handedTo(ctx, l, w, keep, tok, r, err)
}

// handedTo is releaseTo after its script: the lease made for w handed to it, or taken back.
// A frame of its own, not under the script's wait (see turnCall).
//
//go:noinline
func (s *token) handedTo(ctx context.Context, l *lease, w *waiter, keep bool, tok string, r int64, err error) error {
	var next Lease
	switch {
	case err == nil && r == turnHanded:
		next = s.newLease(s, l.name, l.key, w.owner, tok, 0)
	case err != nil && !isReply(err):
		// The reply was lost (connection, deadline): the script may have run and left the
		// lock to a token nobody holds. Take it back if so.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		_ = compareDelete(cctx, s.c, l.key, tok)
		cancel()
	}
	if !s.notify.handOver(w, next, keep) && next != nil {
		// w stopped waiting meanwhile: pass the lock on.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		_ = next.Release(cctx)
		cancel()
	}
	if err != nil {
		return err
	}
	return s.turned(l.name, r)
}

func (s *token) renew(ctx context.Context, l *lease) (bool, error) {
	return compareExtend(ctx, s.c, l.key, l.token, s.o.ttlArg)
}

// isReply reports whether err is Redis's answer (an error reply, or nil), not a failure to
// get one.
func isReply(err error) bool {
	_, ok := rueidis.IsRedisErr(err)
	return ok
}

// setNX runs SET key val NX PX ttl and reports whether it won.
func setNX(ctx context.Context, c rueidis.Client, key, val string, ttlMS int64) (bool, error) {
	err := c.Do(ctx, c.B().Set().Key(key).Value(val).Nx().PxMilliseconds(ttlMS).Build()).Error()
	if rueidis.IsRedisNil(err) {
		return false, nil
	}
	return err == nil, err
}

// setNXArg is setNX with the ttl already formatted (resolved.ttlArg): the builder's
// PxMilliseconds formats it with strconv on every call, one allocation per acquire.
func setNXArg(ctx context.Context, c rueidis.Client, key, val, ttlArg string) (bool, error) {
	err := c.Do(ctx, setNXCmd(c, key, val, ttlArg)).Error()
	if rueidis.IsRedisNil(err) {
		return false, nil
	}
	return err == nil, err
}

// setNXCmd builds setNXArg's command in a frame of its own: the builder's temporaries
// would otherwise stay in the frame under the command's wait for its reply, the deepest
// point of every worker's stack (base.wait says why that matters).
//
//go:noinline
func setNXCmd(c rueidis.Client, key, val, ttlArg string) rueidis.Completed {
	return c.B().Arbitrary("SET").Keys(key).Args(val, "NX", "PX", ttlArg).Build()
}

// compareDelete deletes key if it still holds tok. ErrNotOwner when the lock was no longer
// ours.
func compareDelete(ctx context.Context, c rueidis.Client, key, tok string) error {
	return unlockResult(unlockScript.Exec(ctx, c, []string{key}, []string{tok}))
}

// unlockResult reads a compare-and-delete script's answer: 1 deleted, 0 not ours.
func unlockResult(r rueidis.RedisResult) error {
	n, err := r.AsInt64()
	if err != nil {
		return err
	}
	if n == 0 {
		return ErrNotOwner
	}
	return nil
}

// compareExtend resets key's ttl if it still holds tok.
func compareExtend(ctx context.Context, c rueidis.Client, key, tok, ttlArg string) (bool, error) {
	n, err := renewScript.ExecInt64(ctx, c, []string{key}, []string{tok, ttlArg})
	return n == 1, err
}

// hashTagged returns a key whose derived keys (key+suffix) land in its own Redis Cluster hash
// slot: key itself when it already carries a hash tag, else "{key}".
func hashTagged(key string) string {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			return key
		}
	}
	return "{" + key + "}"
}

// fenced is token plus a fencing token (beyond the seeds; Kleppmann's answer to the pause
// problem): the same SET NX PX, and in the same script an INCR of a per-lock counter that
// never expires. A resource that remembers the largest token it accepted can then refuse a
// holder whose lease expired while it was paused.
type fenced struct {
	*token
}

func newFenced(info Info, o *resolved) (Strategy, error) {
	t, err := newTokenStrategy(info, o)
	if err != nil {
		return nil, err
	}
	tt := t.(*token)
	tt.handsOver = false // its acquire is a script with a fencing counter, not SET NX
	return &fenced{token: tt}, nil
}

func (s *fenced) Acquire(ctx context.Context, key, owner string) (Lease, error) {
	lockKey := hashTagged(key)
	fenceKey := lockKey + ":fence"
	return s.acquire(ctx, key, owner, func(ctx context.Context) (Lease, time.Duration, error) {
		tok := newToken(owner)
		f, err := fencedAcquireScript.ExecInt64(ctx, s.c, []string{lockKey, fenceKey}, []string{tok, s.o.ttlArg})
		if err != nil || f == 0 {
			return nil, 0, err
		}
		return s.fencedLease(key, lockKey, fenceKey, owner, tok, f)
	})
}

// fencedLease is the attempt's lease for fence f, made in a frame of its own: the attempt's
// frame lies under the script's wait for its reply (see base.turnCall).
//
//go:noinline
func (s *fenced) fencedLease(key, lockKey, fenceKey, owner, tok string, f int64) (Lease, time.Duration, error) {
	if f < 0 {
		return nil, 0, fmt.Errorf("fence counter %s went negative (%d)", fenceKey, f)
	}
	return s.newLease(s, key, lockKey, owner, tok, uint64(f)), 0, nil
}

// setNXDel is seed 004's first version: SET key owner NX with a ttl, released by a plain DEL.
// A holder whose lease expired deletes whoever holds the lock now.
type setNXDel struct {
	*base
	c rueidis.Client
}

func newSetNXDel(info Info, o *resolved) (Strategy, error) {
	b, err := newBaseWaiting(info, o, o.Client, articleLoop)
	if err != nil {
		return nil, err
	}
	return &setNXDel{base: b, c: o.Client}, nil
}

func (s *setNXDel) Acquire(ctx context.Context, key, owner string) (Lease, error) {
	return s.acquire(ctx, key, owner, func(ctx context.Context) (Lease, time.Duration, error) {
		// The seed sets EX in seconds; PX keeps sub-second ttls from rounding to nothing.
		ok, err := setNXArg(ctx, s.c, key, owner, s.o.ttlArg)
		if !ok || err != nil {
			return nil, 0, err
		}
		return s.newLease(s, key, key, owner, owner, 0), 0, nil
	})
}

func (s *setNXDel) release(ctx context.Context, l *lease) error {
	return s.blindDelete(ctx, s.c, l.name, l.key)
}

func (s *setNXDel) renew(context.Context, *lease) (bool, error) {
	return false, errNoRenew
}

var errNoRenew = fmt.Errorf("strategy cannot renew")
