package strategies

import (
	"fmt"
	"time"
)

// Redisson's lockWatchdogTimeout (Config.java, redisson-4.7.0: 30 * 1000 ms): the lease of a
// lock taken without a leaseTime, renewed every third of it (RenewalTask.schedule,
// renewal/RenewalTask.java lines 47-54): the family's Info.OwnLease, which Settle makes the
// phase's lease, renewed every third of it, when the caller chose none.
const redissonWatchdogTimeout = 30 * time.Second

// LeaseReporter is a Strategy whose lease is not always the Options' TTL and Watchdog: the
// Redisson family, which runs as Redisson's lock() when the caller chose no lease
// (Params.TTL left at its zero value). Lease is the lease it runs with, its renewal interval (0 = none)
// and the Redisson call a lockbench acquire is.
type LeaseReporter interface {
	Lease() (ttl, renewal time.Duration, call string)
}

// redissonLease is what the Redisson family reports as LeaseReporter.
type redissonLease struct {
	ttl, renewal time.Duration
	call         string
}

func (l redissonLease) Lease() (time.Duration, time.Duration, string) {
	return l.ttl, l.renewal, l.call
}

// redissonCall names the Redisson call o's lease is (Settle made it). Every lockbench
// acquire has a wait time (--acquire-timeout), so each is one of RLock's tryLock forms:
//   - no ttl and no watchdog given: tryLock(waitTime), leaseTime -1, which takes
//     lockWatchdogTimeout's 30s lease and renews it every 10s (RedissonLock.tryAcquireAsync,
//     RedissonBaseLock.scheduleExpirationRenewal), as lock() does without a wait;
//   - a ttl without a watchdog: tryLock(waitTime, leaseTime): the lease, never renewed;
//   - --watchdog auto: tryLock(waitTime) with lockWatchdogTimeout set to the ttl;
//   - a watchdog interval of the user's: lockbench's renewal, which Redisson has no setting
//     for (it always renews at a third of lockWatchdogTimeout).
func redissonCall(o *resolved) redissonLease {
	switch {
	case o.TTL.None():
		return redissonLease{call: "no lease: not a Redisson call"}
	case !o.TTL.Chosen() && !o.Watchdog.Enabled():
		// Redisson's own default lease, in place of DefaultTTL (Info.OwnLease), which
		// Settle made.
		return redissonLease{o.ttl, o.renewal, "tryLock(waitTime): lockWatchdogTimeout 30s, renewed every 10s (Redisson's default, as lock())"}
	case o.renewal == 0:
		return redissonLease{o.ttl, 0, fmt.Sprintf("tryLock(waitTime, leaseTime %s): no watchdog", o.ttl)}
	case o.Watchdog.Auto:
		return redissonLease{o.ttl, o.renewal, fmt.Sprintf("tryLock(waitTime) with lockWatchdogTimeout %s, renewed every %s", o.ttl, o.renewal)}
	}
	return redissonLease{o.ttl, o.renewal, fmt.Sprintf("tryLock(waitTime) with a %s lease renewed every %s (lockbench's interval; Redisson renews at a third of the lease)", o.ttl, o.renewal)}
}
