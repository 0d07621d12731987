// Package strategies implements the distributed lock strategies that lockbench measures.
//
// Every strategy of the catalog (docs/strategies.md) lives here, including the broken ones: a
// strategy implements exactly what its source article describes, flaws included, because
// showing how and how often a naive lock fails is part of the product. The Info of each
// strategy says which properties it has and which weakness the tool can expose.
//
// All strategies talk to Redis through rueidis clients that the caller owns (auto-pipelining
// on; see NewClientOption). Lua scripts are embedded .lua files built once at package level
// and run with EVALSHA, falling back to EVAL when the server does not know the script yet.
package strategies

import (
	"context"
	"errors"
	"strings"
	"time"
)

// Strategy acquires named locks. Implementations are safe for concurrent use by any number
// of goroutines.
type Strategy interface {
	// Acquire takes key for owner, waiting per the wait policy until it succeeds or ctx ends.
	//
	// owner identifies the holder (process id + worker, as Redisson uses clientUUID:threadId)
	// and must be unique across every process that contends for the same keys. A reentrant
	// strategy re-enters when the same owner asks again while holding the key; any other
	// strategy treats that as contention.
	//
	// When ctx ends first, the error wraps both ErrNotAcquired and ctx.Err(); contention is an
	// outcome, not a failure. Any other error is a Redis or network failure.
	Acquire(ctx context.Context, key, owner string) (Lease, error)

	// Info describes the strategy's properties; it is the catalog entry it was registered with.
	Info() Info

	// Stats returns counters accumulated since the strategy was built.
	Stats() Stats

	// Close stops background work (subscriptions, renewals of leases still held). It does not
	// close the rueidis clients, which belong to the caller. Leases must not be used after it.
	Close() error
}

// SharedLocker is a Strategy whose locks can also be held shared (readers).
//
// AcquireShared takes key for owner as a reader: readers hold a key together, never beside a
// writer (Acquire). Owner, waiting, context and errors are as for Acquire; the Lease releases
// the read hold only. Info.Capacity is CapacityRW.
type SharedLocker interface {
	AcquireShared(ctx context.Context, key, owner string) (Lease, error)
}

// SetLocker is a Strategy that can take several keys as one lock (all or none).
//
// AcquireSet holds every key of keys for owner when it returns a Lease, or none of them: a
// key it cannot get makes it give back those it took and start over, so sets that overlap
// in any order cannot deadlock. The Lease releases them all together. keys must not be
// empty. Owner, waiting, context and errors are as for Acquire. Info.Capacity is CapacitySet.
type SetLocker interface {
	AcquireSet(ctx context.Context, keys []string, owner string) (Lease, error)
}

// Chainer is a Strategy whose lock service can begin a holder's next acquire the moment its
// release is done, in the same request: as a program that gives a lock back and takes it
// again does, with no round trip to lockbench between the two (the driver protocol's
// release with "then", for a driver whose hello says it supports "chain"). The engine
// chains in a closed loop of one key a cycle, where a worker's next key is known when it
// releases.
type Chainer interface {
	// Chains reports whether the strategy's leases implement ChainedRelease.
	Chains() bool
}

// ChainedRelease is a Lease of a Chainer.
type ChainedRelease interface {
	// ReleaseThen releases as Release does, and has the service begin the acquire of key
	// for owner, bounded by timeout, as soon as the release is done, whatever its outcome.
	// The acquire is nil when it was not begun (the error says why); otherwise its Wait or
	// its Cancel must be called.
	ReleaseThen(ctx context.Context, key, owner string, timeout time.Duration) (Pending, error)
}

// Pending is an acquire a ChainedRelease began.
type Pending interface {
	// Wait is the acquire's outcome, as Acquire's, waiting until ctx ends. The lease's
	// ValidUntil counts from when the release was sent: the acquire began after that.
	Wait(ctx context.Context) (Lease, error)
	// Cancel gives the acquire up unwaited: a grant that came or comes is given back.
	Cancel()
}

// PermitCounter reports how many permits of key are free now (expired ones counted free).
//
// A semaphore (Info.Capacity CapacitySemaphore) implements it, so that the oracle can count
// permits that holders took and nothing gave back. A key no process has used yet reports
// Options.Permits.
type PermitCounter interface {
	Available(ctx context.Context, key string) (int, error)
}

// Lease is one held lock. Its methods are safe for concurrent use, but Release is meant to
// be called once: a second call returns ErrReleased.
type Lease interface {
	// Release gives the lock up and stops its watchdog. It returns an error wrapping
	// ErrNotOwner when Redis shows the lease was already lost (expired, taken over); for the
	// strategies whose unlock is a blind DEL this never happens — they delete whatever is
	// there, which is their weakness.
	Release(ctx context.Context) error

	// Fence returns the monotonic fencing token issued with this lease, 0 when the strategy
	// has none.
	Fence() uint64

	// Lost is closed when the watchdog found the lease gone or could not renew it before it
	// expired. Leases without a watchdog return a nil channel, which is never closed.
	Lost() <-chan struct{}

	// ValidUntil is the earliest the lease can expire in its lock service, by this process's
	// clock: its ttl counted from the start of the attempt that took it or of the last renewal
	// that got through. A holder that acts past it may no longer hold the lock. Far in the
	// future for a lease that only its holder ends (a connection's lock, NoTTL); zero when
	// unknown, and the oracle then counts a ttl from the acquire.
	ValidUntil() time.Time
}

// Stats are counters of one Strategy, read atomically; a new phase builds a new Strategy.
type Stats struct {
	Renewals       uint64 // successful watchdog renewals
	RenewFailures  uint64 // renewals that found the lease gone or failed past its expiry
	Notifications  uint64 // wake-up messages received by the pubsub wait policy
	Subscriptions  uint64 // SUBSCRIBE commands sent by the pubsub wait policy
	FailedAttempts uint64 // acquire attempts that found the lock taken
	Unreplicated   uint64 // grants the replicas did not confirm in time, given back (WaitReplicas)
}

// Sentinel errors, wrapped with the key (and cause) they concern; test with errors.Is.
var (
	// ErrNotAcquired: the context ended while waiting for the lock.
	ErrNotAcquired = errors.New("lock not acquired")
	// ErrNotOwner: on release or renewal, Redis shows that someone else holds the lock or
	// that it expired.
	ErrNotOwner = errors.New("lock not owned")
	// ErrReleased: Release was called on a lease already released.
	ErrReleased = errors.New("lease already released")
	// ErrCrashed: a fault hook simulated a client crash in the middle of an acquire; the
	// lock may be left behind in Redis exactly as a dead client would leave it.
	ErrCrashed = errors.New("client crashed (simulated)")
)

// Fatal is implemented by an error after which a strategy cannot go on at all — the process
// that takes its locks died, hung or wrote garbage — rather than one call that failed: the
// engine ends the phase at once on the first, and the run with it, instead of counting the
// same error until the window closes. Test with IsFatal.
type Fatal interface{ Fatal() bool }

// IsFatal reports whether err, or an error it wraps, is Fatal.
func IsFatal(err error) bool {
	var f Fatal
	return errors.As(err, &f) && f.Fatal()
}

// Info is a catalog entry: what a strategy is, what it guarantees and what it does not.
type Info struct {
	Name string `json:"name"`
	// Summary says what the strategy does, in one line.
	Summary string `json:"summary"`
	// SafeUnlock: release verifies ownership atomically (no deleting someone else's lock).
	SafeUnlock bool `json:"safe_unlock"`
	// Reentrant: the same owner may acquire a key it already holds.
	Reentrant bool `json:"reentrant"`
	// AutoRenew: a watchdog can extend the lease while it is held (--watchdog).
	AutoRenew bool `json:"auto_renew"`
	// Fencing: each lease carries a monotonic fencing token.
	Fencing bool `json:"fencing"`
	// MultiNode: the lock spans several independent Redis masters.
	MultiNode bool `json:"multi_node"`
	// KeyTTL: Redis expires the lock key by itself (a ttl), so a lock left without one is
	// stuck for good. getset's key never has a ttl: a dead holder's lock is taken over by
	// its timestamp instead.
	KeyTTL bool `json:"key_ttl"`
	// NoTTL: the strategy can also run without a ttl (Options.TTL NoTTL, --ttl 0): its lock
	// key then never expires, and a holder that dies keeps it for good.
	NoTTL bool `json:"no_ttl,omitempty"`
	// OwnLease is the strategy's own default lease, in place of DefaultTTL, when neither
	// --ttl nor --watchdog is given, renewed every third of it: Redisson's lock() lease,
	// lockWatchdogTimeout (redissonWatchdogTimeout). Settle makes it, once per phase; 0: none.
	OwnLease time.Duration `json:"-"`
	// SafeWithoutFaults: mutual exclusion holds when no fault is injected, clocks agree and
	// holds stay well below the ttl. Strategies that claim it are held to it by the tests.
	SafeWithoutFaults bool `json:"safe_without_faults"`
	// Source names the seed article (docs/sources.md lists them) or "beyond the seeds"; for a
	// library adapter, the library and its version.
	Source string `json:"source"`
	// NativeWait says, in one line, how the strategy waits under --wait native (the default):
	// its source's own wait, citing the file and lines it follows (seed NNN §, a Redisson
	// file, a library), or for lockbench's own locks what is natural for them and why. It
	// opens with a short form ending in ": " (NativeWaitShort), e.g. "retry at once: ...".
	NativeWait string `json:"native_wait"`
	// Service is the lock service the strategy runs on: "" for Redis, else the name its
	// package registers a workload.Backend under ("etcd", "zookeeper", "postgres").
	Service string `json:"service,omitempty"`
	// Applies lists the lockbench options the strategy honours when it does not take all of
	// them (a library measured as shipped maps only some onto its own); nil = all.
	Applies []string `json:"options,omitempty"`
	// Capacity says how many may hold one key at once, for the oracle: CapacityMutex (one),
	// CapacitySemaphore (Options.Permits), CapacityRW (readers together, a writer alone) or
	// CapacitySet (one per key, several keys per lease).
	Capacity string `json:"capacity,omitempty"`
	// Weakness is the failure mode the tool can expose, in one line.
	Weakness string `json:"weakness"`
}

// Info.Capacity values.
const (
	// CapacityMutex: one holder per key. The empty value: every lock that is not one of the
	// kinds below.
	CapacityMutex = ""
	// CapacitySemaphore: up to Options.Permits holders per key; the strategy is a
	// PermitCounter.
	CapacitySemaphore = "semaphore"
	// CapacityRW: any number of readers (SharedLocker.AcquireShared) or one writer (Acquire)
	// per key, never both.
	CapacityRW = "rw"
	// CapacitySet: one holder per key, and a lease may hold several keys
	// (SetLocker.AcquireSet); Acquire holds one.
	CapacitySet = "set"
)

// NativeWaitShort is NativeWait's short form, for a table column: its text up to the first
// ": ", or all of it when it has none.
func (i Info) NativeWaitShort() string {
	short, _, _ := strings.Cut(i.NativeWait, ": ")
	return short
}
