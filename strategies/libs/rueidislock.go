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
	// majority is how many of its keys a lock needs (KeyMajority).
	majority int32
	// tokens maps the value a lock's keys hold (one for all its keys, drawn anew at each
	// try) to the lock's tally, from the acquire until its release returns.
	mu     sync.Mutex
	tokens map[string]*tally
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
	s := &rueidisLock{common: newCommon(info, o), majority: 2, tokens: map[string]*tally{}}
	s.renewal = 0 // the library renews; lockbench's watchdog never runs
	lo := rueidislock.LockerOption{
		ClientOption: co,
		KeyValidity:  o.TTL.Duration(),
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
		s.majority = 1
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
	l := &rueidisLease{s: s, key: key, owner: owner}
	l.seen.Context = context.WithoutCancel(ctx)
	parent, cancelParent := context.WithCancel(&l.seen)
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
	// The tries that failed before this one deleted what keys they got, and were counted:
	// only this try's deletes are the release's.
	l.seen.deleted.Store(0)
	l.seen.failed.Store(0)
	l.ctx, l.cancel, l.cancelParent = lctx, cancel, cancelParent
	return l, nil
}

// remember records that keys holding token are t's lock's. A try before, which failed,
// had another token: its deletes are over (the library waits for them), and it is forgotten.
func (s *rueidisLock) remember(token string, t *tally) {
	s.mu.Lock()
	if t.token != token {
		delete(s.tokens, t.token)
		t.token = token
	}
	s.tokens[token] = t
	s.mu.Unlock()
}

// tallyOf is the tally of the lock whose keys hold token, nil if none.
func (s *rueidisLock) tallyOf(token string) *tally {
	s.mu.Lock()
	t := s.tokens[token]
	s.mu.Unlock()
	return t
}

// forget drops t's token, once its release has returned.
func (s *rueidisLock) forget(t *tally) {
	s.mu.Lock()
	delete(s.tokens, t.token)
	s.mu.Unlock()
}

func (s *rueidisLock) Close() error {
	s.locker.Close()
	return nil
}

// rueidisLease is a lock WithContext granted: its context, cancelled when the library finds
// the lock lost, and the cancel that releases it.
type rueidisLease struct {
	seen         tally // what Redis answered its deletes; the parent of the lock's context
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
//
// The cancel returns nothing: the library drops what its deletes found. What Redis answered
// them is read on the way (tracked): the lock was released when a majority of its keys were
// still its own and deleted, else it had lapsed (ErrNotOwner: its delete, a compare-and-delete,
// left alone whatever key another holder had). When a delete failed (Redis unreachable) and
// no majority was seen deleted, the outcome is unknown: an error that is neither success nor
// ErrNotOwner, which the engine counts as a failed release and never as a misdelete.
func (l *rueidisLease) Release(ctx context.Context) error {
	if !l.released.CompareAndSwap(false, true) {
		return fmt.Errorf("%w: key %s", strategies.ErrReleased, l.key)
	}
	if pause := l.s.hooks.ReleasePause; pause != nil {
		pause(ctx, l.key, l.owner)
	}
	lost := l.ctx.Err() != nil
	l.cancel() // returns once every key's delete was answered
	l.cancelParent()
	l.s.forget(&l.seen)
	if l.s.hooks.BeforeRenew != nil {
		l.s.owners.CompareAndDelete(l.key, l.owner)
	}
	switch deleted := l.seen.deleted.Load(); {
	case lost:
		return fmt.Errorf("%s: release key %s: %w", l.s.info.Name, l.key, errNotOwner(errors.New("rueidislock had cancelled the lock's context")))
	case deleted >= l.s.majority:
		return nil
	case l.seen.failed.Load() > 0:
		return fmt.Errorf("%s: release key %s: outcome unknown: a delete of its keys failed (%d of %d needed were seen deleted)", l.s.info.Name, l.key, deleted, l.s.majority)
	default:
		return fmt.Errorf("%s: release key %s: %w", l.s.info.Name, l.key, errNotOwner(fmt.Errorf("%d of its keys were still its own, %d needed", deleted, l.s.majority)))
	}
}

// tally counts what Redis answered the library's deletes of one lock's keys. It is the
// context the lock's context derives from (Value finds it), so that tracked knows which lock
// an acquire is for; the deletes, sent without it, are matched by the keys' value.
type tally struct {
	context.Context
	deleted atomic.Int32 // keys deleted: they still held the lock's value
	failed  atomic.Int32 // deletes that got no answer (an error)
	token   string       // the keys' value; guarded by rueidisLock.mu
}

type tallyKey struct{}

func (t *tally) Value(key any) any {
	if key == (tallyKey{}) {
		return t
	}
	return t.Context.Value(key)
}

func (l *rueidisLease) Fence() uint64 { return 0 }

// Lost is the lock's context's Done: the only signal rueidislock gives its holder.
func (l *rueidisLease) Lost() <-chan struct{} { return l.ctx.Done() }

// ValidUntil is far away: rueidislock keeps its keys renewed by itself and gives its holder
// no deadline to check, only its context (Lost), which --on-lost abort reads as well.
func (l *rueidisLease) ValidUntil() time.Time { return farFuture }

var farFuture = time.Now().AddDate(100, 0, 0)

// tracked is rueidislock's client, seen through by the adapter for the library's scripts
// only: each extend first runs the BeforeRenew hook (where a process pause freezes the
// holder's renewals, as it does the lock core's watchdog), and a renewal Redis accepted
// counts in Stats.Renewals; the value of each key an acquire got is remembered with its
// lock's tally, and a delete's answer is counted in it (see rueidisLease.Release). Every
// other command passes straight through.
type tracked struct {
	rueidis.Client
	s *rueidisLock
}

// rueidislock's scripts (rueidis v1.0.79, rueidislock/lock.go), which the library runs by
// EVALSHA, by EVAL where the server does not know them yet. TestAcquireRelease and
// TestRueidislockRenewsThroughTheHook fail if they change.
const (
	extendScript = `if redis.call("GET",KEYS[1]) == ARGV[1] then local r = redis.call("PEXPIREAT",KEYS[1],ARGV[2]);redis.call("GET",KEYS[1]);return r end;return 0`
	delkeyScript = `if redis.call("GET",KEYS[1]) == ARGV[1] then return redis.call("DEL",KEYS[1]) end;return 0`
)

// acquireScripts are the four ways the library sets a key: NX or forced, PX or PXAT.
var acquireScripts = []string{
	`local r = redis.call("SET",KEYS[1],ARGV[1],"NX","PX",ARGV[2]);redis.call("GET",KEYS[1]);return r`,
	`local r = redis.call("SET",KEYS[1],ARGV[1],"NX","PXAT",ARGV[2]);redis.call("GET",KEYS[1]);return r`,
	`local r = redis.call("SET",KEYS[1],ARGV[1],"PX",ARGV[2]);redis.call("GET",KEYS[1]);return r`,
	`local r = redis.call("SET",KEYS[1],ARGV[1],"PXAT",ARGV[2]);redis.call("GET",KEYS[1]);return r`,
}

type scriptKind uint8

const (
	otherCommand scriptKind = iota
	extendCall
	delkeyCall
	acquireCall
)

// scripts maps each script's SHA1 (for EVALSHA) and text (for EVAL) to its kind.
var scripts = func() map[string]scriptKind {
	m := map[string]scriptKind{}
	add := func(text string, k scriptKind) {
		sum := sha1.Sum([]byte(text))
		m[text], m[hex.EncodeToString(sum[:])] = k, k
	}
	add(extendScript, extendCall)
	add(delkeyScript, delkeyCall)
	for _, a := range acquireScripts {
		add(a, acquireCall)
	}
	return m
}()

// kind is what args run: one of the library's scripts on KEYS[1] = args[3] with ARGV[1] =
// args[4], the key's value, or another command.
func kind(args []string) scriptKind {
	if len(args) < 5 || (args[0] != "EVALSHA" && args[0] != "EVAL") {
		return otherCommand
	}
	return scripts[args[1]]
}

func (c *tracked) Do(ctx context.Context, cmd rueidis.Completed) rueidis.RedisResult {
	args := cmd.Commands()
	k := kind(args)
	if k == otherCommand {
		return c.Client.Do(ctx, cmd)
	}
	token := args[4] // read before Do: rueidis recycles a command's arguments once it is sent
	if k == extendCall {
		if hook := c.s.hooks.BeforeRenew; hook != nil {
			// args[3] is rueidislock:<i>:<name>
			if _, name, ok := strings.Cut(strings.TrimPrefix(args[3], "rueidislock:"), ":"); ok {
				if owner, ok := c.s.owners.Load(name); ok {
					hook(ctx, name, owner.(string))
				}
			}
		}
	}
	r := c.Client.Do(ctx, cmd)
	if noScript(r) {
		return r
	}
	switch k {
	case extendCall:
		if v, err := r.AsInt64(); err == nil && v == 1 {
			c.s.renewals.Add(1)
		}
	case acquireCall:
		if r.Error() == nil {
			if t, ok := ctx.Value(tallyKey{}).(*tally); ok {
				c.s.remember(token, t)
			}
		}
	case delkeyCall:
		if t := c.s.tallyOf(token); t != nil {
			switch v, err := r.AsInt64(); {
			case err != nil:
				t.failed.Add(1)
			case v == 1:
				t.deleted.Add(1)
			}
		}
	}
	return r
}

// noScript reports an EVALSHA the server did not know: the library sends the EVAL next.
func noScript(r rueidis.RedisResult) bool {
	e, ok := rueidis.IsRedisErr(r.Error())
	return ok && e.IsNoScript()
}
