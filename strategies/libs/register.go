package libs

import "github.com/lockbench/lockbench/strategies"

// Pinned versions (go.mod), as the catalog's Source names them.
const (
	redsyncSource     = "github.com/go-redsync/redsync/v4 v4.18.1 on go-redis v9.23.0"
	redislockSource   = "github.com/bsm/redislock v0.9.4 on go-redis v9.23.0"
	rueidislockSource = "github.com/redis/rueidis/rueidislock v1.0.79"
)

// What the libraries take from lockbench's options (Info.Applies); every other option is
// ignored. The ttl is each library's expiry, the acquire timeout the deadline of the
// context its acquire gets, --watchdog lockbench's renewal through its Extend/Refresh
// (rueidislock: its ExtendInterval).
var (
	appliesSingle = []string{"ttl", "acquire-timeout", "watchdog"}
	appliesMulti  = []string{"ttl", "acquire-timeout", "watchdog", "drift-factor"}
)

const noFence = "no fencing token: a holder paused past the ttl (no renewal reaches Redis) overlaps the next one"

func init() {
	strategies.Register(strategies.Info{
		Name:              "redsync",
		Summary:           "go-redsync Mutex on one master: SET NX PX; 32 tries 50-250ms apart; unlock by compare-and-delete script",
		SafeUnlock:        true,
		AutoRenew:         true,
		KeyTTL:            true,
		SafeWithoutFaults: true,
		Source:            redsyncSource,
		Applies:           appliesSingle,
		NativeWait:        "32 tries, 50-250ms: its own; up to 32 tries a random 50-250ms apart (redsync v4.18.1 redsync.go:12-13,35, mutex.go:86-100); lockbench never sets its wait",
		Weakness:          noFence + "; gives up after its 32 tries (about 5s) whatever the acquire timeout",
	}, newRedsync)
	strategies.Register(strategies.Info{
		Name:              "redsync-redlock",
		Summary:           "go-redsync Mutex over the redlock topology's masters: its Redlock, majority within ttl - elapsed - drift",
		SafeUnlock:        true,
		AutoRenew:         true,
		MultiNode:         true,
		KeyTTL:            true,
		SafeWithoutFaults: true,
		Source:            redsyncSource,
		Applies:           appliesMulti,
		NativeWait:        "32 tries, 50-250ms: its own; up to 32 rounds a random 50-250ms apart (redsync v4.18.1 redsync.go:12-13,35, mutex.go:86-100); lockbench never sets its wait",
		Weakness:          noFence + "; a master restarted without persistence forgets the locks it granted",
	}, newRedsync)
	strategies.Register(strategies.Info{
		Name:              "redislock",
		Summary:           "bsm/redislock Obtain with its default NoRetry: one SET NX PX script per acquire (a try-lock); release by script",
		SafeUnlock:        true,
		AutoRenew:         true,
		KeyTTL:            true,
		SafeWithoutFaults: true,
		Source:            redislockSource,
		Applies:           appliesSingle,
		NativeWait:        "one try: its own; NoRetry, one try that fails at once (redislock v0.9.4 redislock.go:87-90, NoRetry at :262); the engine's worker tries again at once",
		Weakness:          noFence + "; a busy key fails at once, and callers that retry at once hammer Redis",
	}, newRedislock(""))
	strategies.Register(strategies.Info{
		Name:              "redislock-linear",
		Summary:           "bsm/redislock Obtain with LinearBackoff(100ms), its documentation's example",
		SafeUnlock:        true,
		AutoRenew:         true,
		KeyTTL:            true,
		SafeWithoutFaults: true,
		Source:            redislockSource,
		Applies:           appliesSingle,
		NativeWait:        "every 100ms: its own; LinearBackoff(100ms), a try every 100ms (redislock v0.9.4 redislock.go:87-101, :257-268)",
		Weakness:          noFence + "; a waiter sleeps a fixed 100ms, so a freed lock idles until one wakes",
	}, newRedislock("linear"))
	strategies.Register(strategies.Info{
		Name:              "redislock-exp",
		Summary:           "bsm/redislock Obtain with ExponentialBackoff(16ms, no max): waits 16ms, then doubling per waiter",
		SafeUnlock:        true,
		AutoRenew:         true,
		KeyTTL:            true,
		SafeWithoutFaults: true,
		Source:            redislockSource,
		Applies:           appliesSingle,
		NativeWait:        "16ms doubling: its own; ExponentialBackoff(16ms, no max), 16ms doubling per waiter (redislock v0.9.4 redislock.go:87-101, :297-310)",
		Weakness:          noFence + "; long waiters back off to seconds and starve behind newcomers",
	}, newRedislock("exp"))
	strategies.Register(strategies.Info{
		Name:              "rueidislock",
		Summary:           "rueidis rueidislock with its defaults: 2 of 3 keys, waits on invalidations (client-side caching), renews itself every ttl/2",
		SafeUnlock:        true,
		AutoRenew:         true,
		KeyTTL:            true,
		SafeWithoutFaults: true,
		Source:            rueidislockSource,
		Applies:           appliesSingle,
		NativeWait:        "invalidations: its own; sleeps on the client-side-cache invalidation of its keys, polling on a timer too (rueidis v1.0.79 rueidislock/lock.go:254-320)",
		Weakness:          noFence + "; without NoLoopTracking (its default) a lock held past its first renewal is renewed in a tight loop on its own invalidations",
	}, newRueidislock(false))
	strategies.Register(strategies.Info{
		Name:              "rueidislock-readme",
		Summary:           "rueidislock as its README configures it for one Redis: KeyMajority 1 (one key), NoLoopTracking",
		SafeUnlock:        true,
		AutoRenew:         true,
		KeyTTL:            true,
		SafeWithoutFaults: true,
		Source:            rueidislockSource,
		Applies:           appliesSingle,
		NativeWait:        "invalidations: its own; sleeps on the client-side-cache invalidation of its key, polling on a timer too (rueidis v1.0.79 rueidislock/lock.go:254-320)",
		Weakness:          noFence + "; a loss shows only as a cancelled context, after a failed renewal",
	}, newRueidislock(true))
}
