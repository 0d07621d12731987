package faults_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/workload"
)

// The client-side faults act inside lockbench (a stalled critical section, frozen renewals,
// a crash between two commands, a skewed clock) against spawned servers. Where the phases
// mostly wait on pauses, they run side by side, each against a server of its own (see
// runApart); where a phase's margin or measure is CPU (a 600ms lease beside 60 workers, a
// spinning client's commands), one after the other. Every phase here has 20 workers on 4
// keys — five contenders per key — so that a lock that lapses is taken by a waiter within a
// backoff (≤ 50ms), long before the lapsed holder comes back.

// pauseTTL and pauseD: a pause outlives the lease by 400ms, more than twice the watchdog's
// renewal interval (ttl/3 = 200ms), so a watchdog that keeps running renews in time even on
// a loaded 2-core machine, and a lease that is not renewed lapses with a waiter ready.
const (
	pauseTTL = 600 * time.Millisecond
	pauseD   = "1s"
)

// Seeds 003/004 and Kleppmann: a holder stalled past its ttl (a slow call, a long
// computation) loses its lock to the next client while it still believes it holds it.
//   - set-nx-del cannot notice: its lease lapses and, worse, its DEL then frees the next
//     holder's lock — UNSAFE. The phase runs until the oracle has seen an overlap.
//   - token with a watchdog keeps its lease: the stall is in the holder's goroutine only, and
//     the watchdog goes on renewing — safe. The phase runs until three holders have come
//     back from a whole stall, each of which outlived the ttl only by the renewals.
//
// A ttl of 2s renews every 667ms (ttl/3): a renewal may run 1.3s late on a busy machine
// before the lease lapses. p=0.2 per critical section with cycles of ~20ms stalls every key
// within a handful of cycles, with four waiters ready.
func TestHolderPause(t *testing.T) {
	t.Parallel()
	b := spawn(t, benchSpec{topology: "single"})
	const d = 3 * time.Second
	fault := "holder-pause:p=0.2,d=3s"
	mod := func(wd strategies.Watchdog) func(*workload.Phase) {
		return func(ph *workload.Phase) {
			ph.TTL, ph.Hold, ph.Watchdog, ph.Faults = strategies.TTLOf(2*time.Second), hold("20ms"), wd, []string{fault}
		}
	}
	naive := b.watchPhase(t, config(deadline, phase("set-nx-del", mod(strategies.Watchdog{}))), &watch{},
		func(w *watch) bool { return w.overlapsSoFar() > 0 })
	// The watchdog renews every ttl/3: a lease renewed at s lapses at s+ttl, so a freeze of
	// the whole process longer than the slack between them (1.33s) lapses it with the
	// renewals frozen — process-pause, which TestProcessPause tests, not holder-pause. A
	// busy CI host once froze this process for seconds (the timeline's ticks 3.0s, then
	// 8.8s; 3 leases lost, 17 renewals where 30 were due). When the poll loop, which wakes
	// every 10ms, saw a gap of half the slack or more, the run cannot tell a watchdog that
	// stopped from a process that did, and the phase runs again, at most twice more.
	slack := 2*time.Second - strategies.Watchdog{Auto: true}.Resolve(2*time.Second)
	var guarded report.Result
	var w *watch
	for attempt := 1; ; attempt++ {
		w = &watch{longD: d}
		guarded = b.watchPhase(t, config(deadline, phase("token", mod(strategies.Watchdog{Auto: true}))), w,
			func(w *watch) bool { return w.long.Load() >= 3 })
		lapsed := guarded.Safety.Overlaps != 0 || guarded.Safety.LostLeases != 0
		gap := w.longestGap()
		if !lapsed || gap < slack/2 || attempt == 3 {
			break
		}
		t.Logf("attempt %d: the process went %v without running (slack %v): its watchdog froze with it; again", attempt, gap.Round(time.Millisecond), slack)
	}

	for _, r := range []report.Result{naive, guarded} {
		e := event(t, r, fault, "holders stalled 3s inside the critical section")
		if stalled := leadingCount(t, e.What); stalled == 0 {
			t.Errorf("%s: no holder was stalled: %q", r.Strategy, e.What)
		}
	}
	if naive.Safety.Overlaps == 0 || !strings.HasPrefix(naive.Verdict, "UNSAFE") {
		t.Errorf("set-nx-del under holder-pause d > ttl: verdict %q, %d overlaps; want UNSAFE", naive.Verdict, naive.Safety.Overlaps)
	}
	if guarded.Safety.Overlaps != 0 || guarded.Verdict != "safe" || guarded.Safety.LostLeases != 0 {
		t.Errorf("token with watchdog under holder-pause: verdict %q, safety %+v; want safe: the watchdog renews through the stall", guarded.Verdict, guarded.Safety)
	}
	if guarded.Renewals == 0 {
		t.Errorf("token with watchdog: no renewals during %d stalls of 3s on a 2s lease", w.long.Load())
	}
}

// A process pause (stop-the-world GC, a VM freeze) stops the holder *and* its watchdog: the
// renewal that falls in the pause is sent after it, when the lease has lapsed. That is the
// difference from holder-pause, and it is why a watchdog does not make a lock safe (Kleppmann,
// "How to do distributed locking"). Only fencing does: the resource refuses the paused
// holder's write, whose token is lower than the one the next holder wrote.
//
// Holds of 250ms outlast the renewal interval (200ms), so the watchdog renews in every
// normal hold — it is running — and the pause (p=0.3, 1s) freezes the next renewal until the
// lease, renewed at 200ms, has lapsed at 800ms with waiters ready: an overlap per pause on a
// contended key, dozens per run.
func TestProcessPause(t *testing.T) {
	t.Parallel()
	fault := "process-pause:p=0.3,d=" + pauseD
	mod := func(label string, wd strategies.Watchdog) func(*workload.Phase) {
		return func(ph *workload.Phase) {
			ph.Label, ph.TTL, ph.Hold, ph.Watchdog, ph.Faults = label, strategies.TTLOf(pauseTTL), hold("250ms"), wd, []string{fault}
		}
	}
	rs := runApart(t, benchSpec{topology: "single"}, config(2500*time.Millisecond,
		phase("token", mod("wd=off", strategies.Watchdog{})),
		phase("token", mod("wd=auto", strategies.Watchdog{Auto: true})),
		phase("fenced", mod("wd=off", strategies.Watchdog{})),
	))
	for _, r := range rs {
		e := event(t, r, fault, "holders frozen 1s with their renewals")
		if leadingCount(t, e.What) == 0 {
			t.Errorf("%s %s: no holder was frozen: %q", r.Strategy, r.Label, e.What)
		}
	}
	bare, watched, fenced := rs[0], rs[1], rs[2]
	if bare.Safety.Overlaps == 0 || bare.Safety.LostLeases == 0 {
		t.Errorf("token without watchdog under process-pause d > ttl: safety %+v; want overlaps and lost leases", bare.Safety)
	}
	if watched.Safety.Overlaps == 0 || !strings.HasPrefix(watched.Verdict, "UNSAFE") {
		t.Errorf("token with watchdog under process-pause: verdict %q, safety %+v; want UNSAFE — its renewals froze with the holder", watched.Verdict, watched.Safety)
	}
	if watched.Renewals == 0 {
		t.Errorf("token with watchdog: no renewals at all, so the watchdog was not running (holds of 250ms, renewal every 200ms)")
	}
	if fenced.Safety.Overlaps == 0 || fenced.Safety.StaleFences == 0 || fenced.Verdict != "safe (fenced)" {
		t.Errorf("fenced under process-pause: verdict %q, safety %+v; want overlaps whose stale writes were refused: \"safe (fenced)\"", fenced.Verdict, fenced.Safety)
	}
}

// Seeds 003/004: get-del compares the token in the client, then DELs. A release paused
// between its GET and its DEL past the ttl lets the lock pass on, and the DEL then removes
// the next holder's lock: a waiter walks in while that holder is inside — overlaps, UNSAFE.
// token stalls at the same place (before its compare-and-delete script) and is harmless:
// the script finds the lock no longer its own, a lost lease, and deletes nothing.
//
// Holds of 200ms keep a holder inside its section most of the time a key is locked, so a
// late DEL often lands on one, and a waiter (backing off ≤ 50ms) walks in before it leaves.
// 60 workers on 12 keys (five contenders each, as elsewhere here) stall 21 to 28 releases
// per phase past the 600ms lease: 8 or 9 overlaps measured for get-del, never zero.
// token's holds are 20ms: its stalled releases are the same, but a hold that a starved
// machine stretches past the 600ms lease (load average 20 on 2 cores did: 2 overlaps with
// no release involved) is 10 times less likely to be one.
//
// What the fault can do is remove another holder's lock: a misdelete, which the oracle
// counts for get-del (its DEL succeeds while a later holder is inside, or that holder's own
// release finds its lock gone while its lease still runs). token's compare-and-delete can
// make none, however late it comes and however starved the machine: so token is judged on
// its misdeletes, and on its lost leases (the stalled releases found the lock gone). Its
// overlaps are not the fault's doing — a token holder inside is overlapped only when its
// own lease lapsed, a hold a starved machine stretched past 600ms (beside two busy loops:
// 6 overlaps, 60 lost leases, 0 misdeletes) — so the verdict must be safe or say only overlaps.
func TestReleasePause(t *testing.T) {
	t.Parallel()
	b := spawn(t, benchSpec{topology: "single"})
	fault := "release-pause:p=0.2,d=" + pauseD
	mod := func(ph *workload.Phase) {
		ph.Workers, ph.Keys, ph.TTL, ph.Hold, ph.Faults = 60, 12, strategies.TTLOf(pauseTTL), hold("200ms"), []string{fault}
	}
	short := func(ph *workload.Phase) { mod(ph); ph.Hold = hold("20ms") }
	// A stall of the whole process of half the lease or more lapses every lease at once, and
	// get-del's late DELs then find nobody's lease still running to count as misdeleted
	// (beside two busy loops: 19 stalls of 0.3-1.8s in 30s, 9 overlaps, 0 misdeletes).
	rs := unstalled(t, pauseTTL/2, func() []report.Result {
		return b.run(t, config(2500*time.Millisecond, phase("get-del", mod), phase("token", short)))
	})
	for _, r := range rs {
		e := event(t, r, fault, "releases stalled 1s before their delete")
		if leadingCount(t, e.What) == 0 {
			t.Errorf("%s: no release was stalled: %q", r.Strategy, e.What)
		}
	}
	getDel, token := rs[0], rs[1]
	if getDel.Safety.Overlaps == 0 || !strings.HasPrefix(getDel.Verdict, "UNSAFE") {
		t.Errorf("get-del under release-pause d > ttl: verdict %q, safety %+v; want UNSAFE: its late DEL frees the next holder's lock", getDel.Verdict, getDel.Safety)
	}
	if getDel.Safety.Misdeletes == 0 {
		t.Errorf("get-del under release-pause d > ttl: safety %+v; want misdeletes: its late DEL removes the next holder's lock", getDel.Safety)
	}
	if token.Safety.Misdeletes != 0 || token.Safety.LostLeases == 0 {
		t.Errorf("token under release-pause d > ttl: safety %+v; want lost leases and no misdelete: its compare-and-delete finds the lock gone and deletes nothing", token.Safety)
	}
	if n := token.Safety.Overlaps; token.Verdict != "safe" && token.Verdict != report.Judge(report.Safety{Overlaps: n}, token.Acquired) {
		t.Errorf("token under release-pause d > ttl: verdict %q; want safe, or overlaps alone (holds a starved machine stretched past the lease)", token.Verdict)
	} else if n > 0 {
		t.Logf("token: %d overlaps with no misdelete: holds stretched past the %s lease by a starved machine, not the fault", n, pauseTTL)
	}
}

// Kleppmann, "How to do distributed locking": a holder that checks its lease before writing
// (--on-lost abort) is safe from a pause before the check — it finds its lease gone and
// abandons the write — but not from one between the check and the write, which no
// client-side check can close. Only fencing makes the resource refuse that write.
//
// token without a watchdog, so the check is the lease's deadline (acquired + ttl): holds of
// 100ms leave it far from the 600ms ttl, and a 1s pause (p=0.3) goes well past it, with
// waiters ready to take the lapsed lock. Measured: some 25 overlaps per phase at either
// point — all abandoned at point=hold, written at point=write.
func TestProcessPausePoints(t *testing.T) {
	t.Parallel()
	atHold, atWrite := "process-pause:p=0.3,d="+pauseD+",point=hold", "process-pause:p=0.3,d="+pauseD+",point=write"
	mod := func(label, fault string) func(*workload.Phase) {
		return func(ph *workload.Phase) {
			ph.Label, ph.TTL, ph.Hold, ph.Faults = label, strategies.TTLOf(pauseTTL), hold("100ms"), []string{fault}
		}
	}
	cfg := config(2500*time.Millisecond,
		phase("token", mod("point=hold", atHold)),
		phase("token", mod("point=write", atWrite)),
		phase("fenced", mod("point=write", atWrite)),
	)
	cfg.OnLost = workload.OnLostAbort
	rs := runApart(t, benchSpec{topology: "single"}, cfg)
	for i, want := range []string{"holders frozen 1s with their renewals", "between their lease check and their last write", "between their lease check and their last write"} {
		e := event(t, rs[i], rs[i].Faults[0], want)
		if leadingCount(t, e.What) == 0 {
			t.Errorf("%s %s: no holder was frozen: %q", rs[i].Strategy, rs[i].Label, e.What)
		}
	}
	before, between, fenced := rs[0], rs[1], rs[2]
	if before.Safety.Overlaps == 0 || before.Safety.Aborted == 0 || before.Safety.StaleWrites != 0 || before.Verdict != "safe (aborted)" {
		t.Errorf("token, paused before its lease check: verdict %q, safety %+v; want overlaps whose stale writes were all abandoned: \"safe (aborted)\"", before.Verdict, before.Safety)
	}
	if between.Safety.StaleWrites == 0 || !strings.HasPrefix(between.Verdict, "UNSAFE") {
		t.Errorf("token, paused between its lease check and its write: verdict %q, safety %+v; want UNSAFE — the check passed, then the write came late", between.Verdict, between.Safety)
	}
	if fenced.Safety.Overlaps == 0 || fenced.Safety.StaleFences == 0 || fenced.Safety.StaleWrites != 0 || !strings.HasPrefix(fenced.Verdict, "safe (fenced") {
		t.Errorf("fenced, paused between its lease check and its write: verdict %q, safety %+v; want its late writes refused: \"safe (fenced)\"", fenced.Verdict, fenced.Safety)
	}
}

// Seed 003: SETNX then EXPIRE as two commands; a client that dies between them leaves a lock
// that never expires, and its key is dead for good. With p=0.05 per won SETNX and hundreds
// of acquires on 8 keys, several keys are stuck within the warm-up (P(no crash in 100
// acquires) = 0.6%). The hook is setnx-expire's own: token, which sets its ttl in the same
// command, is not touched by the fault.
func TestCrashBetween(t *testing.T) {
	t.Parallel()
	b := spawn(t, benchSpec{topology: "single"})
	fault := "crash-between:p=0.05"
	mod := func(ph *workload.Phase) { ph.Keys, ph.Hold, ph.Faults = 8, hold("5ms"), []string{fault} }
	rs := b.run(t, config(time.Second, phase("setnx-expire", mod), phase("token", mod)))

	naive, token := rs[0], rs[1]
	e := event(t, naive, fault, "clients killed between SETNX and EXPIRE")
	if n := leadingCount(t, e.What); n == 0 {
		t.Errorf("setnx-expire: %q, want crashes", e.What)
	}
	if naive.Safety.StuckKeys == 0 {
		t.Errorf("setnx-expire under crash-between: stuck_keys 0; want the keys its dead clients left without a ttl")
	}
	if naive.Safety.StuckKeys > 8 {
		t.Errorf("setnx-expire: %d stuck keys of 8", naive.Safety.StuckKeys)
	}
	// A stuck key is never free again: its contenders wait out their acquire timeout.
	if naive.Timeouts == 0 {
		t.Errorf("setnx-expire: no acquire timed out on %d stuck keys", naive.Safety.StuckKeys)
	}
	e = event(t, token, fault, "clients killed between SETNX and EXPIRE")
	if n := leadingCount(t, e.What); n != 0 || token.Safety.StuckKeys != 0 {
		t.Errorf("token under crash-between: %q, %d stuck keys; want neither (the fault targets setnx-expire's two commands)", e.What, token.Safety.StuckKeys)
	}
}

// Seed 000 trusts client clocks. Half the workers read a clock 5s ahead, more than the 3s
// ttl (which no holder of 200ms outlives by being descheduled, even on a busy machine: at
// 600ms one CI run saw setnx-stale overlap without any skew doing it):
//   - getset: a skewed client judges every lock an unskewed one holds stale (now - then =
//     5s > ttl) and takes it over while its holder is inside — every such takeover is an
//     overlap, dozens per run.
//   - setnx-stale: SET NX still guards the lock, so it stays safe; but a skewed client judges
//     the live lock stale and, as the seed's do-while does, retries at once without pausing,
//     spinning SET/GET for the whole hold. Its cost per acquire is measured against the same
//     phase without skew, whose losers pause between attempts.
//
// How much a spinner sends in a hold is a matter of round trips, which a starved machine
// stretches; what an in-sync loser sends is a matter of its pause, which it does not. With
// the pause as long as the hold (200ms each), a busy machine's round trips of tens of
// milliseconds brought the ratio from 13x down to 1.3x and, beside two busy loops, 0.8x.
// So setnx-stale's in-sync losers pause 1s, twice its 500ms hold: each sends about one
// SET/GET per hold and the lock waits for the next loser's turn, while a skewed one sends
// a SET/GET per round trip — still several per hold at 100ms a round trip.
func TestClockSkew(t *testing.T) {
	t.Parallel()
	b := spawn(t, benchSpec{topology: "single"})
	fault := "clock-skew:fraction=0.5,offset=5s"
	mod := func(label string, held, pause time.Duration, faults ...string) func(*workload.Phase) {
		return func(ph *workload.Phase) {
			ph.Label, ph.TTL, ph.Faults = label, strategies.TTLOf(3*time.Second), faults
			ph.Hold = hold(held.String())
			// Losers pause between attempts, the seed's loop sleeping; a skewed one skips
			// the pause.
			ph.Wait = strategies.Wait{Kind: strategies.WaitSpin, Interval: pause}
		}
	}
	const stallHold, stallPause = 500 * time.Millisecond, time.Second
	stalePair := func() []workload.Phase {
		return []workload.Phase{
			phase("setnx-stale", mod("skewed", stallHold, stallPause, fault)),
			phase("setnx-stale", mod("in sync", stallHold, stallPause)),
		}
	}
	rs := b.run(t, config(3*time.Second, append([]workload.Phase{
		phase("getset", mod("skewed", 200*time.Millisecond, 200*time.Millisecond, fault))}, stalePair()...)...))
	getset, stale, calm := rs[0], rs[1], rs[2]
	// A skewed waiter spins only while an in-sync client holds its key: a lock a skewed
	// client holds looks live to every other skewed one. In 3s of 4 keys and holds of 500ms
	// (24 holds at most) the skewed clients can happen to hold nearly every key: a quiet
	// fresh-clone run (ci73) sent 180 commands skewed against 140 in sync, 9.5 and 8.8 per
	// acquire, no spin at all. So a pair that shows less than the ratio below runs again,
	// at most twice more; a client that never spins shows 1x every time and still fails.
	for attempt := 2; attempt <= 3 && stale.Redis.Measured && calm.Redis.Commands > 0 &&
		stale.Safety.Overlaps+calm.Safety.Overlaps == 0 && // an overlap fails the test below, at once
		float64(stale.Redis.Commands) < 1.5*float64(calm.Redis.Commands); attempt++ {
		t.Logf("setnx-stale: %d commands skewed, %d in sync: the skewed clients may have held the keys; attempt %d", stale.Redis.Commands, calm.Redis.Commands, attempt)
		again := b.run(t, config(3*time.Second, stalePair()...))
		stale, calm = again[0], again[1]
	}
	for _, r := range rs[:2] {
		e := event(t, r, fault, "workers read a clock 5s off")
		if want := "10 of 20 workers"; !strings.HasPrefix(e.What, want) {
			t.Errorf("%s: %q, want it to say %q", r.Strategy, e.What, want)
		}
		if e.TS != 0 {
			t.Errorf("%s: skew event at t=%.2fs; a skewed clock is there from the start (0)", r.Strategy, e.TS)
		}
	}
	if getset.Safety.Overlaps == 0 || !strings.HasPrefix(getset.Verdict, "UNSAFE") {
		t.Errorf("getset with half the clocks 5s ahead: verdict %q; want UNSAFE (skewed clients take over live locks)", getset.Verdict)
	}
	if stale.Safety.Overlaps != 0 || calm.Safety.Overlaps != 0 {
		t.Errorf("setnx-stale: %d overlaps skewed, %d in sync; SET NX guards it either way", stale.Safety.Overlaps, calm.Safety.Overlaps)
	}
	if !stale.Redis.Measured || !calm.Redis.Measured || calm.Redis.Commands == 0 {
		t.Fatalf("setnx-stale: Redis cost not measured (skewed %+v, in sync %+v)", stale.Redis, calm.Redis)
	}
	// A skewed waiter sends a SET and a GET per round trip for a whole hold; an in-sync one
	// about one pair per pause. Without the spin the two phases cost the same, 1x. The two
	// phases have the same workers and window, so their commands compare as they are; per
	// acquire they would not on a starved machine, where the in-sync phase's timed-out
	// waiters add commands and no acquire (1.4x per acquire, 1.9x in all, in one such run).
	ratio := float64(stale.Redis.Commands) / float64(calm.Redis.Commands)
	t.Logf("setnx-stale commands: %d skewed, %d in sync (%.1fx; per acquire %.1f and %.1f)", stale.Redis.Commands, calm.Redis.Commands, ratio, stale.Redis.CommandsPerAcquire, calm.Redis.CommandsPerAcquire)
	if ratio < 1.5 {
		// A spinner sends a SET/GET per round trip, a loser in sync one per pause: where a
		// round trip takes a twentieth of the pause, the spin cannot show. Beside two busy
		// loops and the suite (ci44, ci46) a run saw 1.2x and 1.3x; session 6 tried a
		// longer pause and more skewed clocks instead, and the skewed clients then held
		// the lock nearly always, where nobody spins (only a lock an in-sync client holds
		// looks stale to a skewed one): 1.3x at a 4ms acquire p50.
		if rt := time.Duration(stale.LatencyUS.Release.P50) * time.Microsecond; rt > stallPause/20 {
			t.Skipf("setnx-stale: %.1fx commands skewed, but a round trip took %s (release p50) against the in-sync losers' %s pause: on a machine this starved a spinner sends no more than a loser that pauses", ratio, rt, stallPause)
		}
		t.Errorf("setnx-stale: %d commands with skewed clocks, %d without: want at least 1.5 times as many (skewed clients spin)", stale.Redis.Commands, calm.Redis.Commands)
	}
}

// leadingCount reads the number an event text starts with ("12 holders stalled ...").
func leadingCount(t *testing.T, what string) int {
	t.Helper()
	var n int
	if _, err := fmt.Sscanf(what, "%d ", &n); err != nil {
		t.Fatalf("event %q does not start with a count: %v", what, err)
	}
	return n
}
