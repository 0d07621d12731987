package strategies

// The catalog, in the order lockbench lists it: the seeds' locks from the most naive to the
// most careful, Redisson's beside the seed's hash lock, then the two that go beyond the
// seeds. Names are part of the CLI contract.
func init() {
	naiveCtor := func(wrap func(*naive) Strategy) Constructor {
		return func(info Info, o *resolved) (Strategy, error) {
			n, err := newNaive(info, o)
			if err != nil {
				return nil, err
			}
			return wrap(n), nil
		}
	}
	register(Info{
		Name:              "getset",
		Summary:           "GETSET now-timestamp; an old value older than the ttl counts as stale and is taken over",
		SafeWithoutFaults: true,
		Source:            "seed 000 §1",
		NativeWait:        "retry at once: the article's getLock fails at once (seed 000 §1, l.90-105) and its clients keep retrying (l.98), with no pause",
		Weakness:          "clients whose clocks disagree both take over a stale lock; blind DEL unlock; no Redis ttl, and retries keep a dead holder's lock fresh",
	}, naiveCtor(func(n *naive) Strategy { return &getset{n} }))
	register(Info{
		Name:              "setnx-expire",
		Summary:           "SETNX, then EXPIRE as a second command; unlock by DEL (--ttl 0: no EXPIRE, the seed's lock before it added one)",
		KeyTTL:            true,
		NoTTL:             true,
		SafeWithoutFaults: true,
		Source:            "seed 003",
		NativeWait:        "retry at once: the article's SETNX fails at once (seed 003 l.26-32, 56-57) and a caller retries at once, as the seeds that show a loop do (000 l.98, 002 l.133)",
		Weakness:          "a crash between SETNX and EXPIRE leaves a lock with no ttl: deadlock",
	}, naiveCtor(func(n *naive) Strategy { return &setnxExpire{n} }))
	register(Info{
		Name:              "setnx-stale",
		Summary:           "SET NX PX with a timestamp value; on failure GET it and retry at once if the client's clock says it is stale",
		KeyTTL:            true,
		SafeWithoutFaults: true,
		Source:            "seed 000 §2",
		NativeWait:        "retry at once: the article's do-while, which retries at once while the value is stale (seed 000 §2, l.120-144), and its clients' retry at once otherwise (l.98)",
		Weakness:          "the stale check trusts client clocks and races; a fast clock spins on SET/GET; blind DEL unlock",
	}, naiveCtor(func(n *naive) Strategy { return &setnxStale{n} }))
	register(Info{
		Name:              "set-nx-del",
		Summary:           "SET key owner NX with a ttl; unlock by plain DEL",
		KeyTTL:            true,
		SafeWithoutFaults: true,
		Source:            "seed 004 (first version)",
		NativeWait:        "retry at once: the article's tryLock returns at once and the caller gives up (seed 004 l.58-78); a caller that must have the lock retries at once, as the seeds that show a loop do (000 l.98, 002 l.133)",
		Weakness:          "after its own lease expired, a slow holder's DEL deletes the next holder's lock",
	}, func(info Info, o *resolved) (Strategy, error) { return newSetNXDel(info, o) })
	register(Info{
		Name:              "get-del",
		Summary:           "SET key uniqueToken NX PX ttl; unlock by GET, compare in the client, then DEL (two commands)",
		AutoRenew:         true,
		KeyTTL:            true,
		SafeWithoutFaults: true,
		Source:            "seeds 003, 004",
		NativeWait:        "retry at once: the articles' SET NX fails at once (seed 003 l.89, 004 l.112); retry at once, as the seeds that show a loop do (000 l.98, 002 l.133)",
		Weakness:          "the check and the delete are not atomic: a pause between GET and DEL deletes the next holder's lock",
	}, newGetDel)
	register(Info{
		Name:              "token",
		Summary:           "SET key uniqueToken NX PX ttl; unlock by Lua compare-and-delete",
		SafeUnlock:        true,
		AutoRenew:         true,
		KeyTTL:            true,
		SafeWithoutFaults: true,
		Source:            "seeds 003, 004",
		NativeWait:        "retry at once: the articles' SET NX fails at once (seed 003 l.89-114, 004 l.112); retry at once, as the seeds that show a loop do (000 l.98, 002 l.133)",
		Weakness:          "without a watchdog, a hold longer than the ttl (GC pause) lets a second holder in",
	}, newTokenStrategy)
	register(Info{
		Name:              "reentrant-local",
		Summary:           "token plus a local per-owner hold count (the ThreadLocal scheme)",
		SafeUnlock:        true,
		Reentrant:         true,
		AutoRenew:         true,
		KeyTTL:            true,
		SafeWithoutFaults: true,
		Source:            "seed 001",
		NativeWait:        "retry at once: the article's tryLock over the previous article's one-shot lock fails at once (seed 001 l.60-62); retry at once, as the seeds that show a loop do (000 l.98, 002 l.133)",
		Weakness:          "the local count outlives the Redis lease, so a re-entry succeeds on an expired lock; not reentrant across processes",
	}, newReentrantLocal)
	register(Info{
		Name:              "reentrant-hash",
		Summary:           "Redis hash field owner -> hold count, Lua acquire/release, PEXPIRE on every entry (seed 001's hash lock: a partial release does not re-arm the ttl)",
		SafeUnlock:        true,
		Reentrant:         true,
		AutoRenew:         true,
		KeyTTL:            true,
		SafeWithoutFaults: true,
		Source:            "seeds 001, 002",
		NativeWait:        "retry at once: seed 002's waiter \"enters a while loop, trying without stop\" (002 l.133) around seed 001's one-shot tryLock script (001 l.124, 170)",
		Weakness:          "without a watchdog a long hold outlives the ttl; async replication loses it on failover",
	}, newReentrantHash)
	register(Info{
		Name:              "redisson-lock",
		OwnLease:          redissonWatchdogTimeout,
		Summary:           "Redisson's RLock: hash field owner -> hold count; a partial release re-arms the ttl, the last deletes and publishes on the lock's channel, waking one waiter",
		SafeUnlock:        true,
		Reentrant:         true,
		AutoRenew:         true,
		KeyTTL:            true,
		SafeWithoutFaults: true,
		Source:            "RedissonLock.java, " + redissonSource,
		NativeWait:        "Redisson's LockPubSub: try first (redisson_wait.go); one subscription per lock channel per process, shared by its waiters; each unlock message wakes one waiter in every subscribed process (LockPubSub.java lines 42-52); a waiter sleeps at most the ttl the script returned or its time left, then tries again (RedissonLock.java lines 227-311, " + redissonRelease + ")",
		Weakness:          "without a watchdog a long hold outlives the ttl; a holder that dies keeps the key a whole lease (30s under Redisson's watchdog); async replication loses it on failover",
	}, newRedissonLock)
	register(Info{
		Name:              "spin-lock",
		OwnLease:          redissonWatchdogTimeout,
		Summary:           "RedissonSpinLock: redisson-lock's hash lock without pub/sub; waiters poll with Redisson's exponential backoff (1ms, doubling plus jitter, at most 128ms)",
		SafeUnlock:        true,
		Reentrant:         true,
		AutoRenew:         true,
		KeyTTL:            true,
		SafeWithoutFaults: true,
		Source:            "RedissonSpinLock.java, " + redissonSource,
		Applies:           []string{"ttl", "acquire-timeout", "watchdog", "wait-replicas"},
		NativeWait:        "backoff 1ms..128ms: RedissonSpinLock's own ExponentialBackOff, 1ms doubling plus jitter, at most 128ms (RedissonSpinLock.java lines 147-200, LockOptions.java, " + redissonRelease + "), whatever --wait says",
		Weakness:          "a freed lock idles until a poller wakes (up to 128ms), and every waiter polls Redis; otherwise redisson-lock's",
	}, newRedissonSpinLock)
	register(Info{
		Name:              "redisson-fair",
		OwnLease:          redissonWatchdogTimeout,
		Summary:           "RedissonFairLock: RLock's hash plus a queue of owners and a sorted set of their timeouts, stale heads pruned on every call; only the head takes a free lock, and a release wakes only it",
		SafeUnlock:        true,
		Reentrant:         true,
		AutoRenew:         true,
		KeyTTL:            true,
		SafeWithoutFaults: true,
		Source:            "RedissonFairLock.java, " + redissonSource,
		NativeWait:        "own channel (Redisson's): queued, a waiter (redisson_fair.go, redisson_wait.go) subscribes to its own channel (redisson_lock__channel:{name}:owner, RedissonFairLock.java lines 57-67), which only the release that makes it the head publishes to, and sleeps at most the ttl the script returned or its time left (RedissonLock.java lines 227-311); its thread wait is its acquire timeout, as tryLock(waitTime) (" + redissonRelease + ")",
		Weakness:          "a waiter that dies holds everyone queued behind it for its thread wait (its wait time, --acquire-timeout, as tryLock(waitTime)); timeouts trust the clients' clocks; one subscription per waiter",
	}, newRedissonFair)
	register(Info{
		Name:              "rw-lock",
		OwnLease:          redissonWatchdogTimeout,
		Summary:           "RReadWriteLock: one hash per key with a mode, readers' and the writer's hold counts, and a timeout key per read hold; readers share, a writer is alone; a release that frees the lock publishes on its channel",
		SafeUnlock:        true,
		Reentrant:         true,
		AutoRenew:         true,
		KeyTTL:            true,
		SafeWithoutFaults: true,
		Source:            "RedissonReadWriteLock, RedissonReadLock.java, RedissonWriteLock.java, " + redissonSource,
		Capacity:          CapacityRW,
		NativeWait:        "Redisson's LockPubSub: on redisson_rwlock:{name} (redisson_wait.go), try first, one subscription per lock per process; a read unlock's message (0) wakes one waiter per process, a write unlock's (1) every one sleeping (LockPubSub.java lines 42-52); sleeps at most the returned ttl or the time left (RedissonLock.java lines 227-311, " + redissonRelease + ")",
		Weakness:          "without a watchdog a long hold outlives the ttl; a stream of readers starves a writer (no queue); every read release scans every read hold's timeout key",
	}, newRWLock)
	register(Info{
		Name:              "semaphore",
		Summary:           "RSemaphore: a count of permits under the key (--permits, set once per key by trySetPermits); acquire DECRBY when enough are free, release INCRBY and publish, waking one waiter",
		SafeWithoutFaults: true,
		Source:            semaphoreSource,
		Capacity:          CapacitySemaphore,
		NativeWait:        "Redisson SemaphorePubSub: on redisson_sc:{name} (redisson_wait.go), try first, one subscription per semaphore per process; a release message carrying n free permits wakes min(subscribers, n) of the process's waiters (SemaphorePubSub.java lines 39-43); a waiter sleeps its time left at most (RedissonSemaphore.java lines 287-353, " + redissonRelease + ")",
		Weakness:          "no owner and no ttl: a holder that dies never gives its permit back (leaked for good, and the key never expires); any client can release",
	}, newSemaphore)
	register(Info{
		Name:              "expirable-semaphore",
		Summary:           "RPermitExpirableSemaphore: RSemaphore's count plus a sorted set of permit ids scored by their lease end (--ttl); acquire reclaims expired permits first, release returns only an id still held",
		SafeUnlock:        true,
		SafeWithoutFaults: true,
		Source:            xsemaphoreSource,
		Capacity:          CapacitySemaphore,
		NativeWait:        "Redisson SemaphorePubSub: as semaphore's (redisson_wait.go), a sleep bounded by the nearest permit's lease end (RedissonPermitExpirableSemaphore.java lines 445-513, SemaphorePubSub.java lines 39-43, " + redissonRelease + ")",
		Weakness:          "no renewal: a hold longer than the lease lets one more holder in; lease ends trust the clients' clocks; the count and its set never expire",
	}, newExpirableSemaphore)
	register(Info{
		Name:              "multilock",
		OwnLease:          redissonWatchdogTimeout,
		Summary:           "RedissonMultiLock over RLocks: the keys of a set taken one by one in the order given, each with redisson-lock's script and wait; a round that runs out (1.5s per key) gives back what it took and starts over; released together",
		SafeUnlock:        true,
		Reentrant:         true,
		AutoRenew:         true,
		KeyTTL:            true,
		SafeWithoutFaults: true,
		Source:            "RedissonMultiLock.java, " + redissonSource,
		Capacity:          CapacitySet,
		NativeWait:        "LockPubSub per key: each key waited for as redisson-lock waits (redisson_wait.go, LockPubSub, RedissonLock.tryLock), for at most the round's time left; a round as lockInterruptibly draws it (RedissonMultiLock.java lines 242-266, 306-400, " + redissonRelease + ")",
		Weakness:          "hold and wait in the order given: sets that list shared keys in opposite orders stall a round (1.5s per key), give up and take their first key again at once, which can livelock; one round trip per key",
	}, newMultiLock)
	register(Info{
		Name:              "redlock",
		Summary:           "token lock on N independent masters; majority within validity = ttl - elapsed - drift; release on all",
		SafeUnlock:        true,
		MultiNode:         true,
		KeyTTL:            true,
		SafeWithoutFaults: true,
		Source:            "seed 003",
		NativeWait:        "random delay: the algorithm's own; every failed round retries after a random delay, 1ms plus up to twice the round (seed 003 l.195-205 has no retry; redis.io's Redlock: \"retry after a random delay\")",
		Weakness:          "a node restarting without persistence forgets its grants; clock jumps and pauses past the validity",
	}, newRedlock)
	register(Info{
		Name:              "fenced",
		Summary:           "token plus INCR of a per-lock counter: a monotonic fencing token per lease",
		SafeUnlock:        true,
		AutoRenew:         true,
		Fencing:           true,
		KeyTTL:            true,
		SafeWithoutFaults: true,
		Source:            "beyond the seeds",
		NativeWait:        "retry at once: token's wait, the seeds' loop; fenced is lockbench's own lock, measured with token's wait so that its row differs from token's by the fence alone",
		Weakness:          "none if the resource checks tokens; leases still overlap, stale writes are refused",
	}, newFenced)
	register(Info{
		Name:              "fair",
		Summary:           "FIFO queue of waiters; a release hands the lock to the queue head and wakes only it (always notified; --wait sets how often it also polls)",
		SafeUnlock:        true,
		AutoRenew:         true,
		KeyTTL:            true,
		SafeWithoutFaults: true,
		Source:            "beyond the seeds",
		NativeWait:        "hand-off, lease-end poll: lockbench's design; the release hands the lock to the queue head and wakes only it, so a queued waiter polls only when the holder's lease ends, for a lease that lapsed with nobody to hand it on",
		Weakness:          "more Redis commands per acquire; a lease that expires with waiters queued goes to whoever polls first",
	}, newFair)
}
