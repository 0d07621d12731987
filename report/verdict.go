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
	// VerdictInconclusive begins "inconclusive: why": the run cannot support a verdict.
	VerdictInconclusive = "inconclusive"
)

// MinAcquiredToJudge is the fewest acquires in the measured window on which a phase is
// judged safe: an overlap takes two holders, so a phase that acquired once cannot have
// shown one. Fewer (but some) read "inconclusive: only 1 acquired"; none reads "no data".
const MinAcquiredToJudge = 2

// Verdict is r's verdict: Judge's from its safety counts, unless the run cannot support a
// safe one — then "inconclusive: why":
//
//   - the lock server denied a command (NOPERM; warm-up included): the workload did not run
//     as the strategy runs, e.g. a waiter never heard a release it was not allowed to
//     SUBSCRIBE to, or every release failed without +@scripting;
//   - the lock server did not answer lockbench's read at the window's end (a probe error):
//     it was frozen or unreachable, and the workers were stuck rather than measured;
//   - fewer than MinAcquiredToJudge acquires.
//
// Evidence beats absence: UNSAFE and DEADLOCK stand whatever else happened. "no data"
// (nothing acquired, which claims nothing) stays unless a denied command or a silent server
// says why.
func Verdict(r *Result) string {
	v := Judge(r.Safety, r.Acquired)
	if v != VerdictNoData && !strings.HasPrefix(v, VerdictSafe) {
		return v // UNSAFE, DEADLOCK: evidence beats absence
	}
	if why := Inconclusive(r); why != "" {
		return VerdictInconclusive + ": " + why
	}
	return v
}

// Inconclusive says why r's run cannot support a verdict of safe, "" when it can (see
// Verdict). It reads the typed counts, never the notes.
func Inconclusive(r *Result) string {
	var whys []string
	if e := r.FirstError(ErrorDenied); e != nil {
		what := "the lock server denied commands"
		if k := r.ErrorsByKind; k != nil && k.Denied > 0 {
			what = "the lock server denied " + plural(int(k.Denied), "command")
		}
		if e.Right != "" {
			what += " (the user lacks " + e.Right + ")"
		}
		whys = append(whys, what)
	}
	if e := r.firstProbe(); e != nil {
		whys = append(whys, "the lock server did not answer at the window's end ("+e.Kind+": frozen or unreachable)")
	}
	if r.Acquired > 0 && r.Acquired < MinAcquiredToJudge {
		whys = append(whys, "only "+strconv.FormatUint(r.Acquired, 10)+" acquired (a verdict needs "+strconv.Itoa(MinAcquiredToJudge)+")")
	}
	return strings.Join(whys, "; ")
}

// FirstError is the first error of kind r saw, nil when none.
func (r *Result) FirstError(kind string) *PhaseError {
	for i := range r.FirstErrors {
		if r.FirstErrors[i].Kind == kind {
			return &r.FirstErrors[i]
		}
	}
	return nil
}

// firstProbe is the failed probe of the lock server at the window's end, nil when it
// answered (or was not probed).
func (r *Result) firstProbe() *PhaseError {
	for i := range r.FirstErrors {
		if r.FirstErrors[i].Op == OpProbe {
			return &r.FirstErrors[i]
		}
	}
	return nil
}

// PhaseError.Op values.
const (
	OpAcquire = "acquire"
	OpRelease = "release"
	OpProbe   = "probe"
)

// IsInconclusive reports whether a verdict says the run could not support one.
func IsInconclusive(verdict string) bool { return strings.HasPrefix(verdict, VerdictInconclusive) }

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
