package workload

import (
	"runtime"
	"runtime/debug"

	"golang.org/x/sys/unix"
)

// prefault makes the next n bytes the start-up takes from the heap resident in one call
// (MADV_POPULATE_WRITE), where a large fleet's start-up would take them a page fault at a
// time: 100,000 workers' 4 KiB stacks are 100,000 faults, which cost a 2-core VM a second
// of CPU (runtime.stackpoolalloc touching each new stack). It maps them as one n-byte
// slice, populates it and lets it go: the collection frees its pages to the runtime's page
// heap, which hands the lowest free pages out first, to the stacks and the workers' state.
// The collector stays off until restore — the start-up's allocations stay live anyway, and
// with a small heap goal the scavenger would give the pages back to the OS before they are
// used. On a kernel without MADV_POPULATE_WRITE (before 5.14) the pages fault as before.
func prefault(n int) (restore func()) {
	old := debug.SetGCPercent(-1)
	b := make([]byte, n) // fresh pages: the runtime does not clear them
	_ = unix.Madvise(b, unix.MADV_POPULATE_WRITE)
	runtime.KeepAlive(b)
	b = nil
	runtime.GC()
	return func() { debug.SetGCPercent(old) }
}
