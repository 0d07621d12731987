package workload

import (
	"sync/atomic"
	"time"
)

// keyState is the engine's own view of one lock key, independent of any strategy: the
// oracle's resource (who is inside, which fencing token it last accepted) and the last
// release, for handoff latency. One per key, padded so that hot keys do not share a cache
// line.
type keyState struct {
	holders   atomic.Int32  // workers inside the critical section now
	entries   atomic.Uint64 // how many times a worker entered: who entered last
	lastFence atomic.Uint64 // largest fencing token the resource accepted

	releasedAt atomic.Int64 // monotonic ns of the last release not yet handed off, 0 = none
	releasedBy atomic.Int32 // worker of that release

	// key is the lock's name, built once. It lives here so that a cycle's first look at its
	// key brings this cache line in: with 100,000 keys picked at random, a separate slice
	// of names cost a cache miss of its own per cycle.
	key string

	_ [8]byte // to 64 bytes: one cache line per key, none shared
}

// enter is a worker stepping into the critical section. It reports an overlap when
// someone else is already inside — mutual exclusion failed, whatever the strategy
// believes — and the entry's number, by which the worker can tell later whether someone
// entered after it (superseded).
func (k *keyState) enter() (overlap bool, entry uint64) {
	return k.holders.Add(1) > 1, k.entries.Add(1)
}

// superseded reports whether another worker entered after entry.
func (k *keyState) superseded(entry uint64) bool { return k.entries.Load() != entry }

func (k *keyState) exit() { k.holders.Add(-1) }

// write is the protected resource checking a fenced write: a token lower than the last one
// it accepted comes from a holder whose lease was superseded, and is refused. Writes without
// a token (fence 0) are unchecked, as with any strategy that has none.
func (k *keyState) write(fence uint64) (accepted bool) {
	if fence == 0 {
		return true
	}
	for {
		last := k.lastFence.Load()
		if fence < last {
			return false
		}
		if fence == last || k.lastFence.CompareAndSwap(last, fence) {
			return true
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
