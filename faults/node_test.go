package faults_test

import (
	"testing"
	"time"

	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/workload"
)

// The node faults act on spawned redis-server processes and on the proxies in front of
// them, on a schedule counted from the measured window's start. Each test runs its phase
// until it has seen the fault and what follows it (see watch), and checks the events and
// the acquires between them: while a server is frozen, dead or cut off, the acquire rate
// falls below a quarter of the same run's rate before, and once the server is back it
// climbs again (see recovering). 20 workers on 8 keys with 5ms holds make about a thousand
// acquires a second on one quiet server, so the dip is the fault, not noise.

func nodePhase(faults ...string) func(*workload.Phase) {
	return func(ph *workload.Phase) { ph.Keys, ph.Hold, ph.Faults = 8, hold("5ms"), faults }
}

// A frozen server (SIGSTOP) answers nothing: acquires wait out their 1s timeout and the
// pause acquires next to nothing. (Afterwards throughput stays low for up to a ttl: SETs
// that contenders sent during the pause and gave up on are run on resume and hold their
// keys with nobody to release them.)
func TestRedisPause(t *testing.T) {
	t.Parallel()
	b := spawn(t, benchSpec{topology: "single"})
	fault := "redis-pause:node=0,at=1s,d=1s"
	w := &watch{}
	r := b.watchPhase(t, config(deadline, phase("token", nodePhase(fault))), w, func(w *watch) bool {
		return w.recovered(fault, "frozen", "answers again")
	})

	event(t, r, fault, "frozen (SIGSTOP) for 1s")
	event(t, r, fault, "answers again")
	frozen, back := w.get(t, fault, "frozen"), w.get(t, fault, "answers again")
	if d := back.at.Sub(frozen.at); d < time.Second {
		t.Errorf("paused for %s, want at least its d of 1s", d)
	}
	before := w.rateBefore(t, frozen)
	during := float64(back.entered-frozen.entered) / back.at.Sub(frozen.at).Seconds()
	t.Logf("acquires/s: %.0f before the pause, %.0f during it", before, during)
	if during > before/4 {
		t.Errorf("acquired %.0f/s before the pause and %.0f/s during it; want a dip below a quarter", before, during)
	}
	if r.Timeouts == 0 {
		t.Errorf("no acquire timed out on a server frozen for as long as the acquire timeout")
	}
}

// kill without restart leaves the single server dead for the rest of the phase: every second
// after it has errors and no acquire, and the server comes back (empty) only when the phase
// ends. With restart it is back after that delay and the phase recovers.
func TestKill(t *testing.T) {
	t.Parallel()
	b := spawn(t, benchSpec{topology: "single"})

	dead := "kill:node=0,at=1s"
	w := &watch{}
	// Three timeline samples after the kill: at least one second of the timeline lies
	// wholly after it, however late a loaded machine takes them.
	r := b.watchPhase(t, config(deadline, phase("token", nodePhase(dead))), w, func(w *watch) bool {
		m, ok := w.find(dead, "killed (SIGKILL)")
		return ok && w.ticksAfter(m.at.Add(100*time.Millisecond)) >= 3
	})
	killed := event(t, r, dead, "killed (SIGKILL)")
	event(t, r, dead, "restarted empty at the phase's end")
	if m := w.get(t, dead, "killed"); m.entered == 0 {
		t.Fatalf("nothing acquired before the kill")
	}
	if back := w.get(t, dead, "restarted"); back.at.Before(w.doneAt) {
		t.Errorf("kill without restart: the node came back before the phase's end")
	}
	after := 0
	for i := 1; i < len(r.Timeline); i++ {
		s := r.Timeline[i]
		if r.Timeline[i-1].TS < killed.TS+0.1 || s.TS-r.Timeline[i-1].TS < 0.5 {
			continue // this second began before the kill (or within its first 100ms), or is the drain's short tail
		}
		after++
		if s.Acquired != 0 || s.Errors+s.Timeouts == 0 {
			t.Errorf("t=%.1fs, after the kill at %.2fs: %d acquired, %d errors, %d timeouts; want no acquire and failures", s.TS, killed.TS, s.Acquired, s.Errors, s.Timeouts)
		}
	}
	if after == 0 {
		t.Errorf("no timeline second lies wholly after the kill at %.2fs: %v", killed.TS, r.Timeline)
	}

	// The rate after the restart is judged against token on a server of its own beside it,
	// over the same two windows (see control): at load 15 the machine's seconds stretched to
	// three, and the rate after a restart that went well was 34/s against 382/s before it.
	brief := "kill:node=0,at=1s,restart=500ms"
	cw := &watch{}
	endControl := spawn(t, benchSpec{topology: "single"}).control(t, config(deadline, phase("token", nodePhase("holder-pause:p=0,d=1ms"))), cw)
	w = &watch{}
	r = b.watchPhase(t, config(deadline, phase("token", nodePhase(brief))), w, func(w *watch) bool {
		return w.recovered(brief, "killed", "restarted empty (no persistence")
	})
	endControl()
	killed = event(t, r, brief, "killed (SIGKILL)")
	back := event(t, r, brief, "restarted empty (no persistence")
	// Not before the delay; after it, as soon as the new process answers, which takes a
	// loaded machine a second or more. That the restart came before the phase's end is in
	// the event's text (see above).
	if d := back.TS - killed.TS; d < 0.5 {
		t.Errorf("kill with restart=500ms: back %.2fs after the kill", d)
	}
	if failures(r, killed.TS, back.TS) == 0 {
		t.Errorf("no errors or timeouts while the node was dead (t=%.2fs..%.2fs): %v", killed.TS, back.TS, r.Timeline)
	}
	rates := w.besideControl(t, cw, w.get(t, brief, "killed"), w.get(t, brief, "restarted"))
	t.Logf("acquires/s: %.0f before the kill, %.0f after the restart; token beside it over the same windows: %.0f, %.0f", rates.before, rates.after, rates.ctlBefore, rates.ctlAfter)
	if !rates.recovered() {
		t.Errorf("acquired %.0f/s before the kill and %.0f/s after the restart, against %.0f and %.0f/s beside it: the phase did not recover", rates.before, rates.after, rates.ctlBefore, rates.ctlAfter)
	}
}

// latency and partition act through the proxy in front of the server. Few workers on many
// keys rarely contend, so an acquire is one round trip: with 20ms more per reply its p50 is
// at least 20ms, whatever else delays it. A partition cuts every connection for a second:
// next to nothing is acquired then, with failures, and the phase recovers when the proxy
// is back.
func TestProxyFaults(t *testing.T) {
	t.Parallel()
	b := spawn(t, benchSpec{topology: "single", proxy: true})
	slow, cut := "latency:node=0,ms=20", "partition:node=0,at=1s,d=1s"
	spread := func(faults ...string) func(*workload.Phase) {
		return func(ph *workload.Phase) { ph.Workers, ph.Keys, ph.Hold, ph.Faults = 10, 1000, hold("1ms"), faults }
	}
	rs := b.run(t, config(time.Second, phase("token", spread()), phase("token", spread(slow))))

	base, delayed := rs[0], rs[1]
	e := event(t, delayed, slow, "replies 20ms later")
	if e.TS > 0 {
		t.Errorf("latency event at t=%.2fs: the delay is on for the whole phase, warm-up included", e.TS)
	}
	// A floor, not a window: a loaded machine adds to any latency (p50s of 5ms to 250ms
	// were seen undelayed), so only the delay's own minimum is a fact of the run.
	p50 := time.Duration(delayed.LatencyUS.Acquire.P50) * time.Microsecond
	t.Logf("acquire p50 %dµs without, %s with 20ms latency", base.LatencyUS.Acquire.P50, p50)
	if p50 < 20*time.Millisecond {
		t.Errorf("latency 20ms: acquire p50 %s; want at least 20ms", p50)
	}

	// The rate after the heal is judged against token on a server of its own beside it, over
	// the same two windows (see control), as TestKill's: beside two busy loops and the suite
	// the machine's seconds stretched to three, and a heal that went well read 78/s after
	// against 991/s before.
	cw := &watch{}
	endControl := spawn(t, benchSpec{topology: "single"}).control(t, config(deadline, phase("token", spread("holder-pause:p=0,d=1ms"))), cw)
	w := &watch{}
	parted := b.watchPhase(t, config(deadline, phase("token", spread(cut))), w, func(w *watch) bool {
		return w.recovered(cut, "cut off", "reachable again")
	})
	endControl()
	offE, onE := event(t, parted, cut, "cut off"), event(t, parted, cut, "reachable again")
	off, on := w.get(t, cut, "cut off"), w.get(t, cut, "reachable again")
	if d := on.at.Sub(off.at); d < time.Second {
		t.Errorf("cut off for %s, want at least its d of 1s", d)
	}
	rates := w.besideControl(t, cw, off, on)
	during := float64(on.entered-off.entered) / on.at.Sub(off.at).Seconds()
	t.Logf("acquires/s: %.0f before the partition, %.0f during it, %.0f after; token beside it over the windows before and after: %.0f, %.0f", rates.before, during, rates.after, rates.ctlBefore, rates.ctlAfter)
	if fails := failures(parted, offE.TS, onE.TS); during > rates.before/4 || fails == 0 {
		t.Errorf("partition: %.0f/s acquired before; %.0f/s acquired and %d errors and timeouts during; want a dip with failures", rates.before, during, fails)
	}
	if !rates.recovered() {
		t.Errorf("partition: %.0f/s acquired after the heal, %.0f/s before, against %.0f and %.0f/s beside it: no recovery", rates.after, rates.before, rates.ctlAfter, rates.ctlBefore)
	}
}

// Seed 003: redlock holds a lock when a majority of its five masters grant it, so two of them
// dying changes nothing for safety and little for throughput: the three others are a
// majority. (Its hazard is a node that comes back empty while holding a lock that a majority
// needed — not exercised here: the nodes stay dead.) A 10s ttl gives each node 500ms to
// answer (redlock's node timeout is ttl/20), so a slow reply on a loaded machine is not
// mistaken for a dead node.
//
// Its rate after the kills is judged against an intact redlock run beside it, over the same
// two windows, not against its own rate before them alone: with 3 masters a contended
// acquire must win all of them, and the rate after is a fifth to the whole of the rate
// before (load 10-17), so a loaded machine's fourfold swings between the two windows took it
// below an eighth once (load 30). The control swings with the machine.
func TestRedlockSurvivesTwoKills(t *testing.T) {
	t.Parallel()
	b, intact := spawn(t, benchSpec{topology: "redlock"}), spawn(t, benchSpec{topology: "redlock"})
	kills := []string{"kill:node=1,at=1s", "kill:node=2,at=1s"}
	settings := func(faults ...string) func(*workload.Phase) {
		return func(ph *workload.Phase) {
			ph.Keys, ph.Hold, ph.TTL, ph.Faults = 8, hold("5ms"), strategies.TTLOf(10*time.Second), faults
		}
	}
	cw := &watch{}
	// A holder pause that never fires: the control's watch counts its acquires in Stall.
	endControl := intact.control(t, config(deadline, phase("redlock", settings("holder-pause:p=0,d=1ms"))), cw)
	w := &watch{}
	// The rate after counts from the later kill, over span(the earlier) acquires.
	bothKilled := func(w *watch) (first, last mark, ok bool) {
		x, ok1 := w.find(kills[0], "killed (SIGKILL)")
		y, ok2 := w.find(kills[1], "killed (SIGKILL)")
		if y.entered < x.entered {
			x, y = y, x
		}
		return x, y, ok1 && ok2
	}
	r := b.watchPhase(t, config(deadline, phase("redlock", settings(kills...))), w, func(w *watch) bool {
		first, last, ok := bothKilled(w)
		return ok && w.entered.Load() >= last.entered+2*span(first)
	})
	cr := endControl()

	for _, k := range kills {
		event(t, r, k, "killed (SIGKILL)")
		event(t, r, k, "restarted empty at the phase's end")
		if back := w.get(t, k, "restarted"); back.at.Before(w.doneAt) {
			t.Errorf("%s: the node came back before the phase's end", k)
		}
	}
	if r.Safety.Overlaps != 0 || r.Verdict != "safe" {
		t.Errorf("redlock with 2 of 5 masters dead: verdict %q; want safe", r.Verdict)
	}
	if cr.Safety.Overlaps != 0 || cr.Verdict != "safe" {
		t.Errorf("the intact redlock beside it: verdict %q; want safe", cr.Verdict)
	}
	first, last, _ := bothKilled(w)
	rates := w.besideControl(t, cw, first, last)
	t.Logf("acquires/s: %.0f before the kills, %.0f after; the intact redlock beside it over the same windows: %.0f, %.0f",
		rates.before, rates.after, rates.ctlBefore, rates.ctlAfter)
	if !rates.recovered() {
		t.Errorf("with 2 of 5 masters dead: %.0f acquires/s against the intact one's %.0f, before the kills %.0f against %.0f; want redlock to go on with the other three",
			rates.after, rates.ctlAfter, rates.before, rates.ctlBefore)
	}
}
