package report

import (
	"strconv"
	"strings"
)

// Verdicts, or their beginnings: Judge builds the rest.
const (
	VerdictSafe     = "safe"
	VerdictUnsafe   = "UNSAFE"
	VerdictDeadlock = "DEADLOCK"
	VerdictNoData   = "no data"
)

// Judge is the oracle's verdict on one phase, from its safety counts and how many locks it
// acquired:
//
//   - "UNSAFE: 26 overlaps, 3 misdeletes" (singular for 1) names every breach of mutual exclusion: overlaps
//     whose stale holder wrote unhindered, misdeletes, fences that went backwards or were
//     handed out twice. Any of them makes the phase unsafe.
//   - "DEADLOCK: 4 keys stuck, 2 permits leaked": locks left behind without a ttl, and
//     semaphore permits dead holders took for good. It follows the UNSAFE part when both
//     happened ("UNSAFE: ...; DEADLOCK: ...").
//   - "safe (fenced)": there were overlaps, but every write the superseded holders made
//     after being superseded was refused by its fencing token, and no fence regressed or
//     was reused. "safe (aborted)": the superseded holders found their lease gone and
//     abandoned their writes (--on-lost abort); "safe (fenced, aborted)" both.
//   - "no data": nothing was acquired, so nothing was shown to be safe.
//   - "safe" otherwise.
func Judge(s Safety, acquired uint64) string {
	var breaches []string
	add := func(n uint64, one, many string) {
		switch {
		case n == 1:
			breaches = append(breaches, "1 "+one)
		case n > 1:
			breaches = append(breaches, strconv.FormatUint(n, 10)+" "+many)
		}
	}
	if s.Overlaps > 0 && !harmless(s) {
		add(s.Overlaps, "overlap", "overlaps")
		if s.Fencing {
			add(s.StaleWrites, "stale write accepted", "stale writes accepted")
		}
	}
	add(s.Misdeletes, "misdelete", "misdeletes")
	add(s.FenceRegressions, "fence regression", "fence regressions")
	add(s.FenceReuses, "reused fence", "reused fences")

	var parts []string
	if len(breaches) > 0 {
		parts = append(parts, VerdictUnsafe+": "+strings.Join(breaches, ", "))
	}
	var deadlocks []string
	if s.StuckKeys > 0 {
		deadlocks = append(deadlocks, plural(int(s.StuckKeys), "key")+" stuck")
	}
	if s.LeakedPermits > 0 {
		deadlocks = append(deadlocks, plural(int(s.LeakedPermits), "permit")+" leaked")
	}
	if len(deadlocks) > 0 {
		parts = append(parts, VerdictDeadlock+": "+strings.Join(deadlocks, ", "))
	}
	switch {
	case len(parts) > 0:
		return strings.Join(parts, "; ")
	case acquired == 0 && s.Overlaps == 0:
		return VerdictNoData
	case s.Overlaps == 0:
		return VerdictSafe
	}
	var how []string
	if s.StaleFences > 0 {
		how = append(how, "fenced")
	}
	if s.Aborted > 0 {
		how = append(how, "aborted")
	}
	return VerdictSafe + " (" + strings.Join(how, ", ") + ")"
}

// harmless reports whether the overlaps did no harm: no superseded holder's write got
// through, because the resource refused it (fencing) or the holder abandoned it (abort).
func harmless(s Safety) bool {
	return s.StaleWrites == 0 && (s.StaleFences > 0 || s.Aborted > 0)
}

// IsUnsafe reports whether a verdict says mutual exclusion failed.
func IsUnsafe(verdict string) bool { return strings.HasPrefix(verdict, VerdictUnsafe) }
