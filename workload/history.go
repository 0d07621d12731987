package workload

import (
	"context"
	"fmt"
	"math"
	"sync/atomic"
	"time"

	"github.com/lockbench/lockbench/report"
)

// A multi-process run (--node) keeps every measured critical section of every worker, so
// that report merge can check the processes against each other (report.CheckAcross): no
// process's own oracle sees another's workers. It costs no round trip on the measured path —
// an append to the worker's own slice — and memory: 32 bytes a section, at most
// maxSections a phase (about 32 MiB); past that a worker stops recording and the history
// says from when it is incomplete.

// maxSections bounds the sections one phase keeps in memory.
const maxSections = 1 << 20

// section is a report.Section on the process's monotonic clock (ns since the phase's origin).
type section struct {
	key         int32
	flags       report.SectionFlags
	read        bool // a rw-lock's shared hold
	enter, exit time.Duration
	fence       uint64
}

// histories holds each worker's sections; a worker appends only to its own slot.
type histories struct {
	slots     []histSlot
	perWorker int
	cutAt     atomic.Int64 // earliest time (ns since origin) a worker stopped recording, 0 = none
}

type histSlot struct {
	secs []section
	_    [40]byte // slots of neighbouring workers on separate cache lines
}

func newHistories(workers int) *histories {
	return &histories{slots: make([]histSlot, workers), perWorker: max(maxSections/max(workers, 1), 1024)}
}

func (h *histories) add(w, key int, flags report.SectionFlags, enter, exit time.Duration, fence uint64, read bool) {
	s := &h.slots[w]
	if len(s.secs) >= h.perWorker {
		for {
			cut := h.cutAt.Load()
			if (cut != 0 && cut <= int64(enter)) || h.cutAt.CompareAndSwap(cut, int64(enter)) {
				return
			}
		}
	}
	s.secs = append(s.secs, section{key: int32(key), flags: flags, read: read, enter: enter, exit: exit, fence: fence})
}

// history converts the sections to the reference clock (see clockSync) and encodes them.
func (h *histories) history(process string, start, end clockSync) (*report.History, error) {
	conv := converter(start, end)
	var secs, reads []report.Section
	for _, s := range h.slots {
		for _, x := range s.secs {
			rs := report.Section{Key: x.key, Flags: x.flags, EnterUS: conv(x.enter), ExitUS: conv(x.exit), Fence: x.fence}
			if x.read {
				reads = append(reads, rs)
			} else {
				secs = append(secs, rs)
			}
		}
	}
	data, err := report.EncodeSections(secs)
	if err != nil {
		return nil, err
	}
	out := &report.History{Process: process, UncertaintyUS: max(start.uncertaintyUS, end.uncertaintyUS) + 2, Sections: len(secs) + len(reads), Data: data}
	if len(reads) > 0 {
		if out.Readers, err = report.EncodeSections(reads); err != nil {
			return nil, err
		}
	}
	if cut := h.cutAt.Load(); cut != 0 {
		out.Truncated, out.TruncatedAtUS = true, conv(time.Duration(cut))
	}
	return out, nil
}

// clockSync is one measurement of this process's clock against the reference clock (the
// backend's, e.g. the barrier's Redis TIME): the reference time, in µs, at the phase's origin.
type clockSync struct {
	ok            bool
	at            time.Duration // when it was measured, since the origin
	refAtOrigin   float64       // reference µs at the origin
	uncertaintyUS int64         // half the round trip of the TIME it is from
}

// converter maps a time since the origin to the reference clock: by the start measurement,
// corrected linearly for the drift the end measurement shows.
func converter(start, end clockSync) func(time.Duration) int64 {
	if !end.ok || end.at <= start.at {
		return func(d time.Duration) int64 { return int64(math.Round(start.refAtOrigin + float64(d)/1e3)) }
	}
	slope := (end.refAtOrigin - start.refAtOrigin) / float64(end.at-start.at)
	return func(d time.Duration) int64 {
		return int64(math.Round(start.refAtOrigin + slope*float64(d-start.at) + float64(d)/1e3))
	}
}

// clockSamples is how many round trips a clock measurement takes; the fastest counts.
const clockSamples = 16

// syncClock measures this process's clock against the backend's reference clock: the
// sample with the shortest round trip bounds the error best (NTP's and Jepsen's way).
func syncClock(ctx context.Context, b Backend, origin time.Time) (clockSync, error) {
	samples, err := clockOf(ctx, b, clockSamples)
	if err != nil {
		return clockSync{}, fmt.Errorf("clock against the barrier's %s: %w", b.Name(), err)
	}
	best := clockSync{uncertaintyUS: math.MaxInt64}
	for _, s := range samples {
		rtt := s.Got.Sub(s.Sent)
		if u := (rtt.Microseconds() + 1) / 2; u < best.uncertaintyUS {
			mid := s.Sent.Add(rtt / 2).Sub(origin)
			best = clockSync{ok: true, at: mid, refAtOrigin: float64(s.RefUS) - float64(mid)/1e3, uncertaintyUS: u + 1}
		}
	}
	return best, nil
}
