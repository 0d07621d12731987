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
}

// checked is a section in the cross-process check.
type checked struct {
	Section
	proc int
	u    int64 // its process's clock uncertainty, µs
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
func CheckAcross(hs []*History) (CrossCheck, error) {
	c := CrossCheck{Processes: len(hs), Complete: true}
	byKey := map[int32][]*checked{}
	var us []int64
	for i, h := range hs {
		secs, err := DecodeSections(h.Data)
		if err != nil {
			return c, fmt.Errorf("process %s: %w", h.Process, err)
		}
		c.Complete = c.Complete && !h.Truncated
		c.Sections += uint64(len(secs))
		us = append(us, h.UncertaintyUS)
		for _, s := range secs {
			byKey[s.Key] = append(byKey[s.Key], &checked{Section: s, proc: i, u: h.UncertaintyUS})
			if s.measured() {
				c.MeasuredSections++
			}
		}
	}
	slices.Sort(us)
	if n := len(us); n >= 2 {
		c.UncertaintyUS = us[n-1] + us[n-2]
	}
	for _, secs := range byKey {
		slices.SortStableFunc(secs, func(a, b *checked) int { return cmp.Compare(a.EnterUS, b.EnterUS) })
		c.overlaps(secs, us[len(us)-1])
		c.writes(secs)
	}
	return c, nil
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
}
