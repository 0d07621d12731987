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
		NativeWait:        "lockbench's backoff 1ms..50ms (the article's own loop comes with the next commit)",
		Weakness:          "clients whose clocks disagree both take over a stale lock; blind DEL unlock; no Redis ttl, and retries keep a dead holder's lock fresh",
	}, naiveCtor(func(n *naive) Strategy { return &getset{n} }))
	register(Info{
		Name:              "setnx-expire",
		Summary:           "SETNX, then EXPIRE as a second command; unlock by DEL (--ttl 0: no EXPIRE, the seed's lock before it added one)",
		KeyTTL:            true,
		NoTTL:             true,
		SafeWithoutFaults: true,
		Source:            "seed 003",
		NativeWait:        "lockbench's backoff 1ms..50ms (the article's own loop comes with the next commit)",
		Weakness:          "a crash between SETNX and EXPIRE leaves a lock with no ttl: deadlock",
	}, naiveCtor(func(n *naive) Strategy { return &setnxExpire{n} }))
	register(Info{
		Name:              "setnx-stale",
		Summary:           "SET NX PX with a timestamp value; on failure GET it and retry at once if the client's clock says it is stale",
		KeyTTL:            true,
		SafeWithoutFaults: true,
		Source:            "seed 000 §2",
		NativeWait:        "lockbench's backoff 1ms..50ms (the article's own loop comes with the next commit)",
		Weakness:          "the stale check trusts client clocks and races; a fast clock spins on SET/GET; blind DEL unlock",
	}, naiveCtor(func(n *naive) Strategy { return &setnxStale{n} }))
	register(Info{
		Name:              "set-nx-del",
		Summary:           "SET key owner NX with a ttl; unlock by plain DEL",
		KeyTTL:            true,
		SafeWithoutFaults: true,
		Source:            "seed 004 (first version)",
		NativeWait:        "lockbench's backoff 1ms..50ms (the article's own loop comes with the next commit)",
		Weakness:          "after its own lease expired, a slow holder's DEL deletes the next holder's lock",
	}, func(info Info, o *resolved) (Strategy, error) { return newSetNXDel(info, o) })
	register(Info{
		Name:              "get-del",
		Summary:           "SET key uniqueToken NX PX ttl; unlock by GET, compare in the client, then DEL (two commands)",
		AutoRenew:         true,
		KeyTTL:            true,
		SafeWithoutFaults: true,
		Source:            "seeds 003, 004",
		NativeWait:        "lockbench's backoff 1ms..50ms (the article's own loop comes with the next commit)",
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
		NativeWait:        "lockbench's backoff 1ms..50ms (the article's own loop comes with the next commit)",
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
		NativeWait:        "lockbench's backoff 1ms..50ms (the article's own loop comes with the next commit)",
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
		NativeWait:        "lockbench's backoff 1ms..50ms (the article's own loop comes with the next commit)",
		Weakness:          "without a watchdog a long hold outlives the ttl; async replication loses it on failover",
	}, newReentrantHash)
	register(Info{
		Name:              "redisson-lock",
		Summary:           "Redisson's RLock: hash field owner -> hold count; a partial release re-arms the ttl, the last deletes and publishes on the lock's channel, waking one waiter",
		SafeUnlock:        true,
		Reentrant:         true,
		AutoRenew:         true,
		KeyTTL:            true,
		SafeWithoutFaults: true,
		Source:            "RedissonLock.java, " + redissonSource,
		NativeWait:        "Redisson's own (redisson_wait.go): try first; one subscription per lock channel per process, shared by its waiters; each unlock message wakes one waiter in every subscribed process (LockPubSub.java lines 42-52); a waiter sleeps at most the ttl the script returned or its time left, then tries again (RedissonLock.java lines 227-311, " + redissonRelease + ")",
		Weakness:          "without a watchdog a long hold outlives the ttl; a holder that dies keeps the key a whole lease (30s under Redisson's watchdog); async replication loses it on failover",
	}, newRedissonLock)
	register(Info{
		Name:              "spin-lock",
		Summary:           "RedissonSpinLock: redisson-lock's hash lock without pub/sub; waiters poll with Redisson's exponential backoff (1ms, doubling plus jitter, at most 128ms)",
		SafeUnlock:        true,
		Reentrant:         true,
		AutoRenew:         true,
		KeyTTL:            true,
		SafeWithoutFaults: true,
		Source:            "RedissonSpinLock.java, " + redissonSource,
		Applies:           []string{"ttl", "acquire-timeout", "watchdog", "wait-replicas"},
		NativeWait:        "RedissonSpinLock's own: ExponentialBackOff, 1ms doubling plus jitter, at most 128ms (RedissonSpinLock.java lines 147-200, LockOptions.java, " + redissonRelease + "), whatever --wait says",
		Weakness:          "a freed lock idles until a poller wakes (up to 128ms), and every waiter polls Redis; otherwise redisson-lock's",
	}, newRedissonSpinLock)
	register(Info{
		Name:              "redisson-fair",
		Summary:           "RedissonFairLock: RLock's hash plus a queue of owners and a sorted set of their timeouts, stale heads pruned on every call; only the head takes a free lock, and a release wakes only it",
		SafeUnlock:        true,
		Reentrant:         true,
		AutoRenew:         true,
		KeyTTL:            true,
		SafeWithoutFaults: true,
		Source:            "RedissonFairLock.java, " + redissonSource,
		NativeWait:        "Redisson's own (redisson_fair.go, redisson_wait.go): queued, a waiter subscribes to its own channel (redisson_lock__channel:{name}:owner, RedissonFairLock.java lines 57-67), which only the release that makes it the head publishes to, and sleeps at most the ttl the script returned or its time left (RedissonLock.java lines 227-311); its thread wait is its acquire timeout, as tryLock(waitTime) (" + redissonRelease + ")",
		Weakness:          "a waiter that dies holds everyone queued behind it for its thread wait (its wait time, --acquire-timeout, as tryLock(waitTime)); timeouts trust the clients' clocks; one subscription per waiter",
	}, newRedissonFair)
	register(Info{
		Name:              "rw-lock",
		Summary:           "RReadWriteLock: one hash per key with a mode, readers' and the writer's hold counts, and a timeout key per read hold; readers share, a writer is alone; a release that frees the lock publishes on its channel",
		SafeUnlock:        true,
		Reentrant:         true,
		AutoRenew:         true,
		KeyTTL:            true,
		SafeWithoutFaults: true,
		Source:            "RedissonReadWriteLock, RedissonReadLock.java, RedissonWriteLock.java, " + redissonSource,
		Capacity:          CapacityRW,
		NativeWait:        "Redisson's own (redisson_wait.go), on redisson_rwlock:{name}: try first, one subscription per lock per process; a read unlock's message (0) wakes one waiter per process, a write unlock's (1) every one sleeping (LockPubSub.java lines 42-52); sleeps at most the returned ttl or the time left (RedissonLock.java lines 227-311, " + redissonRelease + ")",
		Weakness:          "without a watchdog a long hold outlives the ttl; a stream of readers starves a writer (no queue); every read release scans every read hold's timeout key",
	}, newRWLock)
	register(Info{
		Name:              "semaphore",
		Summary:           "RSemaphore: a count of permits under the key (--permits, set once per key by trySetPermits); acquire DECRBY when enough are free, release INCRBY and publish, waking one waiter",
		SafeWithoutFaults: true,
		Source:            semaphoreSource,
		Capacity:          CapacitySemaphore,
		NativeWait:        "Redisson's own (redisson_wait.go), on redisson_sc:{name}: try first, one subscription per semaphore per process; a release message carrying n free permits wakes min(subscribers, n) of the process's waiters (SemaphorePubSub.java lines 39-43); a waiter sleeps its time left at most (RedissonSemaphore.java lines 287-353, " + redissonRelease + ")",
		Weakness:          "no owner and no ttl: a holder that dies never gives its permit back (leaked for good, and the key never expires); any client can release",
	}, newSemaphore)
	register(Info{
		Name:              "expirable-semaphore",
		Summary:           "RPermitExpirableSemaphore: RSemaphore's count plus a sorted set of permit ids scored by their lease end (--ttl); acquire reclaims expired permits first, release returns only an id still held",
		SafeUnlock:        true,
		SafeWithoutFaults: true,
		Source:            xsemaphoreSource,
		Capacity:          CapacitySemaphore,
		NativeWait:        "Redisson's own (redisson_wait.go), as semaphore's, a sleep bounded by the nearest permit's lease end (RedissonPermitExpirableSemaphore.java lines 445-513, SemaphorePubSub.java lines 39-43, " + redissonRelease + ")",
		Weakness:          "no renewal: a hold longer than the lease lets one more holder in; lease ends trust the clients' clocks; the count and its set never expire",
	}, newExpirableSemaphore)
	register(Info{
		Name:              "multilock",
		Summary:           "RedissonMultiLock over RLocks: the keys of a set taken one by one in the order given, each with redisson-lock's script and wait; a round that runs out (1.5s per key) gives back what it took and starts over; released together",
		SafeUnlock:        true,
		Reentrant:         true,
		AutoRenew:         true,
		KeyTTL:            true,
		SafeWithoutFaults: true,
		Source:            "RedissonMultiLock.java, " + redissonSource,
		Capacity:          CapacitySet,
		NativeWait:        "each key waited for as redisson-lock waits (redisson_wait.go: LockPubSub, RedissonLock.tryLock), for at most the round's time left; a round as lockInterruptibly draws it (RedissonMultiLock.java lines 242-266, 306-400, " + redissonRelease + ")",
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
		NativeWait:        "lockbench's backoff 1ms..50ms (the article's own loop comes with the next commit)",
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
		NativeWait:        "lockbench's backoff 1ms..50ms (the article's own loop comes with the next commit)",
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
		NativeWait:        "the release wakes the queue head; between messages it polls with lockbench's backoff 1ms..50ms",
		Weakness:          "more Redis commands per acquire; a lease that expires with waiters queued goes to whoever polls first",
	}, newFair)
}
