package report

import (
	"cmp"
	"fmt"
	"slices"
)

// CrossCheck is what report merge found by checking the processes' histories against each
// other: what no single process could see. Its counts are already included in the merged
// Safety's; they are repeated here to say where they came from.
type CrossCheck struct {
	// Processes and Sections are how many histories and critical sections were checked.
	Processes int    `json:"processes"`
	Sections  uint64 `json:"sections"`
	// MeasuredSections are the sections of the measured window: one per acquire the
	// processes counted. The others (warm-up, cycles that ended after the window closed;
	// FlagUnmeasured) are checked against them but add nothing to the counts below.
	MeasuredSections uint64 `json:"measured_sections"`
	// UncertaintyUS is the largest clock uncertainty of two processes together: overlaps
	// shorter than that between those processes were not counted.
	UncertaintyUS int64 `json:"clock_uncertainty_us"`
	// Complete is false when a process stopped recording early (see History.Truncated).
	Complete bool `json:"complete"`

	Overlaps         uint64 `json:"overlaps"`
	Misdeletes       uint64 `json:"misdeletes"`
	StaleWrites      uint64 `json:"stale_writes"`
	StaleFences      uint64 `json:"stale_fences"`
	FenceRegressions uint64 `json:"fence_regressions"`
	FenceReuses      uint64 `json:"fence_reuses"`

	// MaxHolders, MaxReaders and MaxWriters are the most holders of one key the check saw
	// inside at once across the processes, certain beyond the clocks' uncertainty (see
	// Safety.MaxHolders); readers and writers for a rw-lock only.
	MaxHolders uint64 `json:"max_holders,omitempty"`
	MaxReaders uint64 `json:"max_readers,omitempty"`
	MaxWriters uint64 `json:"max_writers,omitempty"`
}

// KeyCapacity is how many may hold one key at once, for the cross-process check: a Result's
// Capacity and Permits.
type KeyCapacity struct {
	Kind    string // "" or "set": one per key; "semaphore": Permits; "rw": readers or one writer
	Permits int
}

// checked is a section in the cross-process check.
type checked struct {
	Section
	proc   int
	reader bool  // a rw-lock's read hold
	u      int64 // its process's clock uncertainty, µs
	// supersededAt is when a section of another process entered while this one was inside
	// (by more than the uncertainty); 0 when none did.
	supersededAt int64
	misdeleted   bool // its release removed a later holder's lock of another process
}

// CheckAcross checks the histories of one phase, one per process, for what breaks mutual
// exclusion between processes: a section of one process entered while one of another
// process was inside, a release that removed the lock of a later holder of another
// process, and a shared resource's view of their fenced writes. It counts only what the
// processes' own oracles did not (the section flags say what they did), so the counts add
// to theirs; and, as they do, only for sections of the measured window: an overlap for the
// section that entered, a misdelete for the one that released, a write for its writer.
//
// It checks mutexes; CheckAcrossCapacity checks locks that admit more than one holder.
func CheckAcross(hs []*History) (CrossCheck, error) { return CheckAcrossCapacity(hs, KeyCapacity{}) }

// CheckAcrossCapacity is CheckAcross for a lock of capacity k. A semaphore's or a rw-lock's
// section overlaps when it enters past the key's capacity (more than Permits inside, a
// reader beside a writer, a writer beside anyone) with a holder of another process among
// those inside; a lock set's sections, one per key of the set, are a mutex's. Misdeletes and
// writes are checked for mutexes and lock sets only: a permit given back removes nobody's
// lock, and these locks carry no fence.
func CheckAcrossCapacity(hs []*History, k KeyCapacity) (CrossCheck, error) {
	c := CrossCheck{Processes: len(hs), Complete: true}
	byKey := map[int32][]*checked{}
	var us []int64
	for i, h := range hs {
		c.Complete = c.Complete && !h.Truncated
		us = append(us, h.UncertaintyUS)
		for _, part := range []struct {
			data   string
			reader bool
		}{{h.Data, false}, {h.Readers, true}} {
			if part.data == "" && part.reader {
				continue
			}
			secs, err := DecodeSections(part.data)
			if err != nil {
				return c, fmt.Errorf("process %s: %w", h.Process, err)
			}
			c.Sections += uint64(len(secs))
			for _, s := range secs {
				byKey[s.Key] = append(byKey[s.Key], &checked{Section: s, proc: i, reader: part.reader, u: h.UncertaintyUS})
				if s.measured() {
					c.MeasuredSections++
				}
			}
		}
	}
	slices.Sort(us)
	if n := len(us); n >= 2 {
		c.UncertaintyUS = us[n-1] + us[n-2]
	}
	shared := k.Kind == "rw" || (k.Kind == "semaphore" && k.Permits > 1)
	for _, secs := range byKey {
		slices.SortStableFunc(secs, func(a, b *checked) int { return cmp.Compare(a.EnterUS, b.EnterUS) })
		if shared {
			c.capacityOverlaps(secs, us[len(us)-1], k)
			continue
		}
		c.overlaps(secs, us[len(us)-1])
		c.writes(secs)
	}
	return c, nil
}

// capacityOverlaps sweeps one key's sections of a semaphore or a rw-lock in entry order:
// at each entry, the holders certainly inside with it (its own process's exactly, another
// process's by more than the two clocks' uncertainty) are the key's holders then.
func (c *CrossCheck) capacityOverlaps(secs []*checked, maxU int64, k KeyCapacity) {
	var inside []*checked
	for _, s := range secs {
		inside = slices.DeleteFunc(inside, func(a *checked) bool { return a.ExitUS+2*maxU < s.EnterUS })
		var readers, writers uint64
		if s.reader {
			readers++
		} else {
			writers++
		}
		past := false // another process's holder is inside past the capacity
		for _, a := range inside {
			tol := int64(0)
			if a.proc != s.proc {
				tol = a.u + s.u
			}
			if min(a.ExitUS, s.ExitUS)-s.EnterUS <= tol {
				continue // gone before s entered, or not certainly inside with it
			}
			if a.reader {
				readers++
			} else {
				writers++
			}
			if a.proc != s.proc && k.Kind == "rw" && (!s.reader || !a.reader) {
				past = true
			}
		}
		n := readers + writers
		if k.Kind == "semaphore" && n > uint64(k.Permits) {
			past = slices.ContainsFunc(inside, func(a *checked) bool {
				return a.proc != s.proc && min(a.ExitUS, s.ExitUS)-s.EnterUS > a.u+s.u
			})
		}
		if past && s.Flags&FlagOverlap == 0 && s.measured() {
			c.Overlaps++
		}
		c.MaxHolders = max(c.MaxHolders, n)
		if k.Kind == "rw" {
			c.MaxReaders, c.MaxWriters = max(c.MaxReaders, readers), max(c.MaxWriters, writers)
		}
		inside = append(inside, s)
	}
}

// overlaps sweeps one key's sections in entry order, keeping those still inside.
func (c *CrossCheck) overlaps(secs []*checked, maxU int64) {
	var inside []*checked
	for _, s := range secs {
		inside = slices.DeleteFunc(inside, func(a *checked) bool { return a.ExitUS+2*maxU < s.EnterUS })
		counted := false
		for _, a := range inside {
			if a.proc == s.proc {
				continue // its own process's oracle saw these two
			}
			tol := a.u + s.u
			if min(a.ExitUS, s.ExitUS)-s.EnterUS <= tol {
				continue // within the clocks' uncertainty: not certain
			}
			if !counted && s.Flags&FlagOverlap == 0 && s.measured() {
				c.Overlaps++
				counted = true
			}
			if a.supersededAt == 0 {
				a.supersededAt = s.EnterUS
			}
			// a left and released while s, who came after it, was still inside: a's
			// successful release removed s's lock.
			if s.EnterUS+tol < a.ExitUS && s.ExitUS > a.ExitUS+tol && a.Flags&(FlagReleased|FlagMisdelete) == FlagReleased && !a.misdeleted {
				a.misdeleted = true
				if a.measured() {
					c.Misdeletes++
				}
			}
		}
		inside = append(inside, s)
	}
}

// write is one write to the resource: on entering a key and (unless abandoned) on leaving.
type write struct {
	at      int64
	s       *checked
	leaving bool
}

// writes plays one key's writes, in time order, against one resource shared by every
// process, as in a real deployment: it refuses a fence below the last one it accepted.
// Writes a process's own resource refused are skipped (counted there already); what is left
// is counted when it took another process's write to show it.
func (c *CrossCheck) writes(secs []*checked) {
	ws := make([]write, 0, 2*len(secs))
	for _, s := range secs {
		if s.Flags&FlagEnterRefused == 0 {
			ws = append(ws, write{at: s.EnterUS, s: s})
		}
		if s.Flags&(FlagAborted|FlagExitRefused) == 0 {
			ws = append(ws, write{at: s.ExitUS, s: s, leaving: true})
		}
	}
	slices.SortStableFunc(ws, func(a, b write) int { return cmp.Compare(a.at, b.at) })
	var last uint64
	var by *checked
	for _, w := range ws {
		s := w.s
		stale := w.leaving && s.supersededAt != 0
		// The resource sees every write; the counts are the measured writers'.
		var n uint64
		if s.measured() {
			n = 1
		}
		switch f := s.Fence; {
		case f == 0:
		case f < last && by.proc != s.proc:
			if stale {
				c.StaleFences += n
			} else {
				c.FenceRegressions += n
			}
			continue
		case f < last:
			continue // refused here but not by its own resource: a stale write it counted
		case f == last && by != s && by.proc != s.proc:
			c.FenceReuses += n
		default:
			last, by = f, s
		}
		if stale && s.Flags&FlagExitStale == 0 {
			c.StaleWrites += n
		}
	}
}

// measured reports whether the section lies in the measured window (see FlagUnmeasured).
func (s Section) measured() bool { return s.Flags&FlagUnmeasured == 0 }

// add puts the cross-process counts into a merged phase's safety.
func (c CrossCheck) add(s *Safety) {
	s.Overlaps += c.Overlaps
	s.Misdeletes += c.Misdeletes
	s.StaleWrites += c.StaleWrites
	s.StaleFences += c.StaleFences
	s.FenceRegressions += c.FenceRegressions
	s.FenceReuses += c.FenceReuses
	s.MaxHolders = max(s.MaxHolders, c.MaxHolders)
	s.MaxReaders = max(s.MaxReaders, c.MaxReaders)
	s.MaxWriters = max(s.MaxWriters, c.MaxWriters)
}
