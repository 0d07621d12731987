package workload

import (
	"sync/atomic"
	"time"

	"github.com/lockbench/lockbench/strategies"
)

// keyState is the engine's own view of one lock key, independent of any strategy: the
// oracle's resource (who is inside, which fencing token it last accepted) and the last
// release, for handoff latency. One per key, padded so that hot keys do not share a cache
// line.
type keyState struct {
	holders    atomic.Int32  // workers inside the critical section now
	releasedBy atomic.Int32  // worker of the release not yet handed off
	entries    atomic.Uint64 // how many times a worker entered: who entered last
	latestOut  atomic.Uint64 // the latest entry that has left again
	lastFence  atomic.Uint64 // largest fencing token the resource accepted
	releasedAt atomic.Int64  // monotonic ns of the last release not yet handed off, 0 = none

	// key is the lock's name, built once. It lives here so that a cycle's first look at its
	// key brings this cache line in: with 100,000 keys picked at random, a separate slice
	// of names cost a cache miss of its own per cycle.
	key string

	// fencedBy is the entry (its low 32 bits: enough to tell two leases of one phase
	// apart) whose write set lastFence.
	fencedBy atomic.Uint32

	// suspect is the entry (low 32 bits, 0 = none) of a holder that came in while an
	// earlier holder's late release was on its way: whether that release removed the
	// newcomer's lock or its own is decided by the newcomer's release (see misdeleted).
	suspect atomic.Uint32 // with fencedBy: 64 bytes, one cache line per key, none shared
}

// enter is a worker stepping into the critical section of a mutex. It reports an overlap
// when someone else is already inside — mutual exclusion failed, whatever the strategy
// believes — and the entry's number, by which the worker can tell later whether someone
// entered after it (superseded).
func (k *keyState) enter() (overlap bool, entry uint64) {
	overlap, entry, _ = k.enterAs(capacity{}, false)
	return overlap, entry
}

// capacity is how many the oracle lets inside one key at once (strategies.Info.Capacity):
// one (a mutex, and each key of a lock set), a semaphore's permits, or a rw-lock's readers
// together or one writer alone.
type capacity struct {
	rw        bool
	semaphore bool
	permits   int32 // a semaphore's
}

func capacityOf(info strategies.Info, permits int) capacity {
	switch info.Capacity {
	case strategies.CapacityRW:
		return capacity{rw: true}
	case strategies.CapacitySemaphore:
		return capacity{semaphore: true, permits: int32(permits)}
	}
	return capacity{}
}

// exclusive reports whether a holder (a reader when read) excludes every other: its entry
// is numbered, and the checks that hang on "someone entered after me" (superseded,
// misdeletes, lapsed leases) apply to it. Semaphore holders and readers share the key:
// their entry is the number of the last exclusive one, and they leave no mark of their own.
func (c capacity) exclusive(read bool) bool { return !c.semaphore && !(c.rw && read) }

// writerUnit is a rw-lock writer's weight in keyState.holders, where a reader counts 1:
// one atomic add tells both how many readers and how many writers are inside (up to a
// million readers and 2047 writers at once).
const writerUnit = 1 << 20

// inside is who is inside a key just after an entry: holders in all, and for a rw-lock the
// readers and writers apart.
type inside struct{ holders, readers, writers int32 }

// enterAs is a holder stepping into a key of capacity c, as a reader when read (a rw-lock's
// shared hold). It reports an overlap when the entry goes past the capacity: anyone else
// inside a mutex, more holders than permits in a semaphore, a reader beside a writer or a
// writer beside anyone in a rw-lock.
func (k *keyState) enterAs(c capacity, read bool) (overlap bool, entry uint64, in inside) {
	switch {
	case c.rw && read:
		n := k.holders.Add(1)
		in = inside{holders: n%writerUnit + n/writerUnit, readers: n % writerUnit, writers: n / writerUnit}
		return n >= writerUnit, k.entries.Load(), in
	case c.rw:
		n := k.holders.Add(writerUnit)
		in = inside{holders: n%writerUnit + n/writerUnit, readers: n % writerUnit, writers: n / writerUnit}
		return n != writerUnit, k.entries.Add(1), in
	case c.semaphore:
		n := k.holders.Add(1)
		return n > c.permits, k.entries.Load(), inside{holders: n}
	}
	n := k.holders.Add(1)
	return n > 1, k.entries.Add(1), inside{holders: n}
}

// exitAs is the holder of entry leaving a key it entered with enterAs.
func (k *keyState) exitAs(c capacity, read bool, entry uint64) {
	switch {
	case c.rw && read, c.semaphore:
		k.holders.Add(-1)
	case c.rw:
		k.holders.Add(-writerUnit)
		k.out(entry)
	default:
		k.exit(entry)
	}
}

// superseded reports whether another worker entered after entry.
func (k *keyState) superseded(entry uint64) bool { return k.entries.Load() != entry }

// exit is the worker of entry leaving the critical section.
func (k *keyState) exit(entry uint64) {
	k.holders.Add(-1)
	k.out(entry)
}

// lockless is the worker of entry stepping in after its lease may have lapsed (it took the
// lock, then did not run for a ttl: a starved goroutine, a GC pause). It is inside, and an
// overlap if someone else is, but it has no lock left for a release to remove: for
// misdeletes it counts as out already. Otherwise a holder that took the key after that
// lock expired, and entered before it, would find it "entered after me, still inside" and
// count a misdelete its release never made. Like latestOut itself, this also hides the
// holders that entered before it from earlier releases: such a misdelete goes uncounted
// rather than a false one counted.
func (k *keyState) lockless(entry uint64) { k.out(entry) }

// out records that entry is out of the race for misdeletes: latestOut is the latest such
// entry.
func (k *keyState) out(entry uint64) {
	for {
		out := k.latestOut.Load()
		if out >= entry || k.latestOut.CompareAndSwap(out, entry) {
			return
		}
	}
}

// successorInside reports whether a worker that entered after entry is inside now: a
// release of entry's lease that succeeds now removes that worker's lock (a misdelete).
func (k *keyState) successorInside(entry uint64) bool {
	last := k.entries.Load()
	return last != entry && k.latestOut.Load() < last
}

// latestInside returns the entry of the worker that entered last when it entered after
// entry and is inside now.
func (k *keyState) latestInside(entry uint64) (uint64, bool) {
	last := k.entries.Load()
	return last, last != entry && k.latestOut.Load() < last
}

// suspectOf marks the holder of entry as a possible victim of a release that succeeded
// while it came in: the release may have removed that holder's lock, or its own just
// before the holder took the key — from the client the two look alike.
func (k *keyState) suspectOf(entry uint64) { k.suspect.Store(uint32(entry)) }

// misdeleted reports whether entry's lock was removed under it: entry was suspected, and
// its own release, sent while its lease still ran, found the lock no longer its own. Only
// someone else's release can have removed it, the one that made entry a suspect.
func (k *keyState) misdeleted(entry uint64, notOwner, inTime bool) bool {
	by := uint32(entry)
	return notOwner && inTime && by != 0 && k.suspect.Load() == by && k.suspect.CompareAndSwap(by, 0)
}

// writeResult is what the protected resource made of a write.
type writeResult uint8

const (
	writeAccepted writeResult = iota
	writeRefused              // the fence was below the last one accepted
	writeReused               // accepted, but the fence is the one another lease wrote last
	writeStale                // accepted from a holder someone had superseded (see phase.write)
)

// write is the protected resource checking a write that entry's holder makes with fence:
// a token lower than the last one it accepted is refused — it comes from a superseded
// holder, or the fence went backwards. Writes without a token (fence 0) are unchecked, as
// with any strategy that has none.
func (k *keyState) write(fence, entry uint64) writeResult {
	if fence == 0 {
		return writeAccepted
	}
	by := uint32(entry)
	for {
		last := k.lastFence.Load()
		switch {
		case fence < last:
			return writeRefused
		case fence == last:
			if k.fencedBy.Load() != by {
				return writeReused
			}
			return writeAccepted
		case k.lastFence.CompareAndSwap(last, fence):
			k.fencedBy.Store(by)
			return writeAccepted
		}
	}
}

// released records that worker is letting the key go at now (ns since the phase clock's
// origin): called as the release begins.
func (k *keyState) released(worker int, now int64) {
	k.releasedBy.Store(int32(worker))
	k.releasedAt.Store(now)
}

// handoff returns how long ago another worker released the key, when this acquire was
// already waiting at that moment (it began at since): the time a waiter pays per turn.
// An acquire that began after the release (a key nobody was waiting for) is no handoff.
// The release is consumed, so that only the next acquire can count it; ok is false when
// there is no handoff.
func (k *keyState) handoff(worker int, since, now int64) (d time.Duration, ok bool) {
	at := k.releasedAt.Swap(0)
	if at == 0 || at < since || int(k.releasedBy.Load()) == worker {
		return 0, false
	}
	return time.Duration(max(now-at, 0)), true
}
