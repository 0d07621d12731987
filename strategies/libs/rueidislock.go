package libs

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/rueidis"
	"github.com/redis/rueidis/rueidislock"

	"github.com/lockbench/lockbench/strategies"
)

// rueidisLock is rueidis's rueidislock Locker with its defaults: KeyMajority 2 (a lock is
// two of three keys, rueidislock:0..2:<key>), waiting on client-side-caching invalidations
// of those keys rather than polling, renewing by itself every KeyValidity/2 until the lock
// is released or lost, and telling its holder of a loss only by cancelling the context
// WithContext returned. The ttl is its KeyValidity; --watchdog DUR sets its ExtendInterval
// (off and auto leave its own, KeyValidity/2: it cannot be told not to renew).
//
// Its default tracking (no NOLOOP) has a cost lockbench shows: a held lock's keys are
// tracked by its own connection, so its own renewal invalidates them, the invalidation
// triggers another renewal, and so on — once a lock has been renewed it is renewed in a
// tight loop until it is released: tens of thousands of commands per second for one idle
// lock on Redis 7.0.15 (TestRueidislockDefaultRenewsInALoop). rueidislock-readme is its
// README's configuration, NoLoopTracking on.
//
// Its client is a rueidis client of its own, made from the run's options as LockerOption
// asks — same servers, credentials, TLS, database, dialing — with rueidis's defaults for the
// rest: client-side caching back on (the library's wait depends on it; except over RESP2,
// the embedded miniredis, where the library falls back to polling every TryNextAfter) and
// no flush delay.
type rueidisLock struct {
	common
	locker rueidislock.Locker
	// owners maps a held lock's name to its owner, for the BeforeRenew hook that the
	// library's own renewals pass through (see tracked); kept only when there is a hook.
	owners sync.Map
}

// newRueidislock builds rueidislock with its defaults, or (readme) as its README's example
// configures it for one Redis server: KeyMajority 1 ("if you have only one Redis
// instance") and NoLoopTracking ("better performance if all your Redis are >= 7.0.5").
func newRueidislock(readme bool) func(strategies.Info, strategies.Options) (strategies.Strategy, error) {
	return func(info strategies.Info, o strategies.Options) (strategies.Strategy, error) {
		return buildRueidislock(info, o, readme)
	}
}

func buildRueidislock(info strategies.Info, o strategies.Options, readme bool) (strategies.Strategy, error) {
	if err := noReplicaWait(info, o); err != nil {
		return nil, err
	}
	co := o.Connect
	if len(co.InitAddress) == 0 {
		return nil, &strategies.OptionError{Field: "redis", Value: "", Reason: "the run's Redis address is unknown (Options.Connect has no InitAddress)"}
	}
	// lockbench's own clients never cache; the library waits on invalidations, which need
	// client-side caching over RESP3. And they delay flushes to batch more commands per
	// write (target.ClientOption), which costs a lone caller up to 50µs per round trip: the
	// library gets rueidis's default, no delay, as its users do.
	co.DisableCache = co.AlwaysRESP2
	co.MaxFlushDelay = 0
	s := &rueidisLock{common: newCommon(info, o)}
	s.renewal = 0 // the library renews; lockbench's watchdog never runs
	lo := rueidislock.LockerOption{
		ClientOption: co,
		KeyValidity:  o.TTL,
		ClientBuilder: func(co rueidis.ClientOption) (rueidis.Client, error) {
			c, err := rueidis.NewClient(co)
			if err != nil {
				return nil, err
			}
			return &tracked{Client: c, s: s}, nil
		},
	}
	if readme {
		lo.KeyMajority, lo.NoLoopTracking = 1, true
	}
	if !o.Watchdog.Auto && o.Watchdog.Interval > 0 {
		lo.ExtendInterval = o.Watchdog.Interval
	}
	l, err := rueidislock.NewLocker(lo)
	if err != nil {
		return nil, err
	}
	s.locker = l
	return s, nil
}

// Acquire waits in WithContext until the lock is granted or ctx ends. rueidislock derives the
// lock's context from the one it is given, and caps the lock's first validity at that
// context's deadline: passing ctx — which carries the acquire timeout — would end the lock,
// or shorten it, when the acquire timeout passes. So the lock's parent is a context that ctx
// cancels only while the wait lasts.
func (s *rueidisLock) Acquire(ctx context.Context, key, owner string) (strategies.Lease, error) {
	if err := checkKey(key); err != nil {
		return nil, err
	}
	parent, cancelParent := context.WithCancel(context.WithoutCancel(ctx))
	stopWait := context.AfterFunc(ctx, cancelParent)
	lctx, cancel, err := s.locker.WithContext(parent, key)
	if !stopWait() { // ctx ended: the wait with it, and a lock granted at that moment too
		if err == nil {
			cancel()
		}
		cancelParent()
		return nil, notAcquired(key, ctx.Err())
	}
	if err != nil {
		cancelParent()
		return nil, s.acquireErr(ctx, key, err)
	}
	if s.hooks.BeforeRenew != nil {
		s.owners.Store(key, owner)
	}
	return &rueidisLease{s: s, key: key, owner: owner, ctx: lctx, cancel: cancel, cancelParent: cancelParent}, nil
}

func (s *rueidisLock) Close() error {
	s.locker.Close()
	return nil
}

// rueidisLease is a lock WithContext granted: its context, cancelled when the library finds
// the lock lost, and the cancel that releases it.
type rueidisLease struct {
	s            *rueidisLock
	key, owner   string
	ctx          context.Context
	cancel       context.CancelFunc // rueidislock's: releases the lock and waits for it
	cancelParent context.CancelFunc
	released     atomic.Bool
}

// Release runs the ReleasePause hook, then cancels the lock's context, which makes the
// library delete its keys (compare-and-delete) and waits for it. The library's renewals go
// on during the pause: they stop only with the release. A lock whose context had already
// ended was lost: ErrNotOwner.
func (l *rueidisLease) Release(ctx context.Context) error {
	if !l.released.CompareAndSwap(false, true) {
		return fmt.Errorf("%w: key %s", strategies.ErrReleased, l.key)
	}
	if pause := l.s.hooks.ReleasePause; pause != nil {
		pause(ctx, l.key, l.owner)
	}
	lost := l.ctx.Err() != nil
	l.cancel()
	l.cancelParent()
	if l.s.hooks.BeforeRenew != nil {
		l.s.owners.CompareAndDelete(l.key, l.owner)
	}
	if lost {
		return fmt.Errorf("%s: release key %s: %w", l.s.info.Name, l.key, errNotOwner(errors.New("rueidislock had cancelled the lock's context")))
	}
	return nil
}

func (l *rueidisLease) Fence() uint64 { return 0 }

// Lost is the lock's context's Done: the only signal rueidislock gives its holder.
func (l *rueidisLease) Lost() <-chan struct{} { return l.ctx.Done() }

// ValidUntil is far away: rueidislock keeps its keys renewed by itself and gives its holder
// no deadline to check, only its context (Lost), which --on-lost abort reads as well.
func (l *rueidisLease) ValidUntil() time.Time { return farFuture }

var farFuture = time.Now().AddDate(100, 0, 0)

// tracked is rueidislock's client, seen through by the adapter for the library's renewals
// only: each EVALSHA of its extend script first runs the BeforeRenew hook (where a process
// pause freezes the holder's renewals, as it does the lock core's watchdog), and a renewal
// Redis accepted counts in Stats.Renewals. Every other command passes straight through.
type tracked struct {
	rueidis.Client
	s *rueidisLock
}

// extendSHA is the SHA1 of rueidislock's extend script (rueidis v1.0.79, lock.go), which
// the library runs by EVALSHA. TestRueidislockRenewsThroughTheHook fails if it changes.
var extendSHA = func() string {
	sum := sha1.Sum([]byte(`if redis.call("GET",KEYS[1]) == ARGV[1] then local r = redis.call("PEXPIREAT",KEYS[1],ARGV[2]);redis.call("GET",KEYS[1]);return r end;return 0`))
	return hex.EncodeToString(sum[:])
}()

func (c *tracked) Do(ctx context.Context, cmd rueidis.Completed) rueidis.RedisResult {
	args := cmd.Commands()
	if len(args) < 4 || args[0] != "EVALSHA" || args[1] != extendSHA {
		return c.Client.Do(ctx, cmd)
	}
	if hook := c.s.hooks.BeforeRenew; hook != nil {
		// args[3] is rueidislock:<i>:<name>
		if _, name, ok := strings.Cut(strings.TrimPrefix(args[3], "rueidislock:"), ":"); ok {
			if owner, ok := c.s.owners.Load(name); ok {
				hook(ctx, name, owner.(string))
			}
		}
	}
	r := c.Client.Do(ctx, cmd)
	if v, err := r.AsInt64(); err == nil && v == 1 {
		c.s.renewals.Add(1)
	}
	return r
}
