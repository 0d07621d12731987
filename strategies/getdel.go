package strategies

import (
	"context"

	"github.com/redis/rueidis"
)

// getDel is the unlock seeds 003 and 004 show on the way to the Lua script: the token lock's
// SET key uniqueToken NX PX ttl, released by a GET, a comparison with the token in the
// client, and a DEL — two commands, not one script. The check is right at the moment of
// the GET, but nothing holds it until the DEL: a pause in between (GC, scheduling, a slow
// network) lets the lease lapse and the next holder take the lock, and the DEL then deletes
// that holder's lock. Hooks.ReleasePause runs exactly there, so the tool can open the gap.
//
// The watchdog renews with token's compare-and-extend script: the weakness under study is
// the unlock, and a renewal that extended someone else's lock would hide it behind another.
type getDel struct {
	*base
	c     rueidis.Client
	pause func(ctx context.Context, key, owner string) // Hooks.ReleasePause; nil = none
}

func newGetDel(info Info, o *resolved) (Strategy, error) {
	b, err := newBaseWaiting(info, o, o.Client, articleLoop)
	if err != nil {
		return nil, err
	}
	b.releasePause = nil // not before the GET: release runs it between the GET and the DEL
	return &getDel{base: b, c: o.Client, pause: o.Hooks.ReleasePause}, nil
}

func (s *getDel) Acquire(ctx context.Context, key, owner string) (Lease, error) {
	return s.acquireToken(ctx, s.c, s, key, owner)
}

// release checks, then deletes. Between the two commands the lock is no longer guarded:
// whatever holds the key when the DEL arrives is deleted.
func (s *getDel) release(ctx context.Context, l *lease) error {
	v, err := s.c.Do(ctx, s.c.B().Get().Key(l.key).Build()).ToString()
	if rueidis.IsRedisNil(err) {
		return ErrNotOwner // expired: nothing to delete
	}
	if err != nil {
		return err
	}
	if v != l.token {
		return ErrNotOwner // someone else's lock: left alone, this time
	}
	if s.pause != nil {
		s.pause(ctx, l.name, l.owner)
	}
	return s.blindDelete(ctx, s.c, l.name, l.key)
}

func (s *getDel) renew(ctx context.Context, l *lease) (bool, error) {
	return compareExtend(ctx, s.c, l.key, l.token, s.o.ttlArg)
}
