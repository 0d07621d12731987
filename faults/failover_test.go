package faults_test

import (
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/workload"
)

// failoverConfig is seed 002's §6 scenario: a token lock on a sentinel-managed master whose
// replica lags 300ms; the master dies 1s into the window and the sentinels promote the
// replica. Every lock granted in the 300ms before the kill never reached the replica: its
// holder goes on, another client can take the same key on the new master (an overlap), and
// when the holder releases, the compare-and-delete finds someone else's token or nothing — a
// lost lease. So every overlap has a holder whose lock was lost, and overlaps <= lost_leases.
//
// The parameters make lost leases near-certain:
//   - open loop at 150 acquires/s: grants arrive at a steady rate whatever the holds (a
//     closed loop's workers all start together and grant in bursts), so about 45 locks are
//     granted inside the 300ms that the kill loses;
//   - holds of 4s..5s: a lost holder releases 3.7s..5s after the kill, after the promotion
//     (2.0s..2.4s after the kill here: sentinels call a master down after 1s) and after the
//     client followed it, so its release reaches the new master and reports the loss (a
//     release sent while no master is up is an error instead);
//   - ttl 10s: the locks the replica did receive outlive the failover, so only the lag loses
//     locks;
//   - 1000 keys for about 700 holders: most keys are held, so a lost key is soon asked
//     for again on the new master while its first holder is still inside (about 40 lost
//     keys of 1000, 250 acquires between the promotion and the window's end at 5s: about
//     ten overlaps expected). Overlaps are likely, not certain, and not asserted.
//
// The acquire timeout (3s) is longer than WAIT's own (the replica timeout, 1s), so that a
// grant the replica did not confirm in time is given back and noted, as --wait-replicas
// promises, and not cut short as a timeout: with both at 1s a busy machine's slower acks
// turned every acquire of the wait-replicas=1 case into a timeout.
//
// In the open loop the phase then waits for the arrivals due in the window to finish, holds
// included, and records their releases — the lost ones among them.
func failoverConfig(waitReplicas int) workload.Config {
	return workload.Config{
		Strategies: []string{"token"},
		Base:       workload.Base{Load: workload.Load{Rate: 150, MaxInflight: 1000, Keys: 1000, Hold: hold("uniform:4s..5s")}, Lock: workload.Lock{TTL: strategies.TTLOf(10 * time.Second), WaitReplicas: waitReplicas}},

		Duration: 5 * time.Second, Warmup: 500 * time.Millisecond, AcquireTimeout: 3 * time.Second,
		Faults: []string{failoverFault},
	}
}

const failoverFault = "failover:at=1s,lag=300ms"

func TestFailover(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	lost := map[int]uint64{}
	// WAIT closes the window: a grant the replica did not confirm is given back before its
	// holder goes on, so nothing the failover loses was held (e.g. 37 lost leases without,
	// 0 with).
	t.Cleanup(func() { t.Logf("lost leases: %d without WAIT, %d with --wait-replicas 1", lost[0], lost[1]) })
	for _, wr := range []int{0, 1} {
		name := "no-wait"
		if wr > 0 {
			name = "wait-replicas=1"
		}
		// One after the other: the no-wait case needs grants in the 300ms before the kill,
		// and two sentinel sets failing over at once on two cores, beside the rest of the
		// suite, delayed the kill by up to 0.9s and left that window empty (seen twice).
		t.Run(name, func(t *testing.T) {
			r := runFailover(t, wr)
			mu.Lock()
			lost[wr] = r.Safety.LostLeases
			mu.Unlock()
			if wr == 0 {
				return
			}
			// After the promotion the new master has no replica until the phase ends, so its
			// grants are not confirmed and given back: the price of the guarantee.
			if !hasNote(r, "not confirmed by 1 replica(s)") {
				t.Errorf("--wait-replicas 1 through a failover: no note of unconfirmed grants; notes %q", r.Notes)
			}
		})
	}
}

// failoverLate is how late the kill, planned 1s into the window, may come before a run is
// taken for one whose process stalled: the replication proxy is this process's, so a stall
// stops replication too (WAIT confirms nothing), and the kill and the promotion's watch run
// late. A quiet fresh-clone run (ci82) killed the master at 1.92s instead of 1.0s, confirmed
// no grant before it and saw no promotion by the window's end; runs here kill at 1.00-1.02s.
const failoverLate = 500 * time.Millisecond

func runFailover(t *testing.T, waitReplicas int) report.Result {
	t.Helper()
	var r report.Result
	for attempt := 1; ; attempt++ {
		b := spawn(t, benchSpec{topology: "sentinel", failover: true})
		r = b.run(t, failoverConfig(waitReplicas))[0]
		i := slices.IndexFunc(r.Events, func(e report.Event) bool {
			return e.Fault == failoverFault && strings.Contains(e.What, "killed (SIGKILL)")
		})
		if i < 0 || r.Events[i].TS < time.Second.Seconds()+failoverLate.Seconds() || attempt == 3 {
			break
		}
		t.Logf("attempt %d: the master was killed at %.2fs, not at 1s: the test's process stalled (its proxy carries the replication); again", attempt, r.Events[i].TS)
	}

	event(t, r, failoverFault, "replication to the replica lags by 300ms")
	killed := event(t, r, failoverFault, "killed (SIGKILL); its replication link cut")
	promoted := event(t, r, failoverFault, "sentinels promoted")
	event(t, r, failoverFault, "back, empty; the sentinels make it a replica")
	if d := promoted.TS - killed.TS; d <= 0 {
		t.Errorf("promoted %.2fs after the kill", d)
	}
	if r.Errors == 0 {
		t.Errorf("no Redis error while the master was dead and not yet replaced")
	}
	switch {
	case waitReplicas == 0 && r.Safety.LostLeases == 0:
		t.Errorf("no lost lease: the locks granted in the 300ms before the kill never reached the replica, yet no release noticed")
	case waitReplicas > 0 && (r.Safety.LostLeases != 0 || r.Safety.Overlaps != 0):
		// Every grant was confirmed on the replica before its holder went on: the
		// promoted replica has every lock anyone holds.
		t.Errorf("--wait-replicas 1: %d lost leases and %d overlaps, want none", r.Safety.LostLeases, r.Safety.Overlaps)
	}
	if r.Safety.Overlaps > r.Safety.LostLeases {
		t.Errorf("%d overlaps but %d lost leases: an overlap needs a holder whose lock was lost, which shows when it releases", r.Safety.Overlaps, r.Safety.LostLeases)
	}
	t.Logf("wait-replicas=%d: %d lost leases, %d overlaps, promoted %.1fs after the kill", waitReplicas, r.Safety.LostLeases, r.Safety.Overlaps, promoted.TS-killed.TS)
	return r
}

func hasNote(r report.Result, s string) bool {
	for _, n := range r.Notes {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}
