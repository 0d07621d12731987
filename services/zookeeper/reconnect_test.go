//go:build !race

package zookeeper_test

// These tests reconnect sessions that hold watches (the server killed and restarted, its
// connections cut). go-zookeeper v1.0.4, the newest, then reads Conn.lastZxid in
// sendSetWatches (conn.go:614) while the new connection's recvLoop writes it (conn.go:849):
// a data race in the client itself, which the race detector reports about one run in eight
// on a loaded machine. They run without -race (go test ./services/zookeeper/); in CI, which
// runs with -race, the main package's TestZKPartitionRecovers and
// TestKillActsOnTheServicesServer drive the same faults through a lockbench binary built
// without it.

import (
	"math"
	"testing"
	"time"

	"github.com/lockbench/lockbench/faults"
	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/services/internal/servicetest"
	"github.com/lockbench/lockbench/services/zookeeper"
	"github.com/lockbench/lockbench/workload"
)

// The kill fault on the server: the clients reconnect once it is back on its data, their
// sessions (persisted with the data) survive the short outage, and the lock stays a lock.
// The phase lasts until a second after the server is back has acquires (the JVM takes a
// few seconds to start on a loaded machine), at most 90 s.
func TestKillAndRestart(t *testing.T) {
	c := conn(t)
	p := c.Processes()[0]
	first := p.Pid()
	nodes := faults.ServiceNodes(zookeeper.Service, c.Addrs(), []faults.Server{p}, nil)
	r, _ := servicetest.RunUntil(t, zookeeper.Backend(c), nodes, 90*time.Second, 10*time.Second,
		servicetest.Phase(zookeeper.Name, 4*time.Second, func(ph *workload.Phase) {
			ph.Faults = []string{"kill:node=0,at=500ms,restart=200ms"}
		}), servicetest.AcquiredAfterEvent("restarted on its data", 1))
	servicetest.KilledAndBack(t, r, first, p.Pid())
	if r.Safety.Overlaps != 0 {
		t.Errorf("zk-lock across a restart of its server: %d overlaps, verdict %q; want none", r.Safety.Overlaps, r.Verdict)
	}
}

// A partition of a second: replies to creates are lost with the connection, and the server
// may have made the znode anyway. The lock finds its own again by its protected name once
// connected; left behind, such a znode would hold its key for as long as the session lives
// (every waiter behind it waiting out its timeout: seen, no acquire for seconds after the
// heal; with the lookup taken out, 3 acquires a second against 67 before the cut). So the
// lock gets back to its pace: the phase lasts until a second after the heal acquires at
// half the rate of the seconds before the cut or better, at most 60 s.
func TestPartitionLeavesNoOrphan(t *testing.T) {
	c := conn(t)
	proxies := faults.NewProxies()
	for _, a := range c.Addrs() {
		proxies.Dial(a) // started before the phase, as the CLI does
	}
	c.Via = proxies.Dial
	t.Cleanup(func() { c.Via = nil; proxies.Close() })
	nodes := faults.ServiceNodes(zookeeper.Service, c.Addrs(), nil, proxies)
	var before, after float64 // acquires per second before the cut, in the last second
	atPace := func(events []report.Event, timeline []report.Second) bool {
		cut, ok1 := servicetest.Find(events, "cut off")
		healed, ok2 := servicetest.Find(events, "reachable again")
		last := timeline[len(timeline)-1].TS - 1.5 // from the last second's start
		if !ok1 || !ok2 || last < healed.TS {
			return false
		}
		r := report.Result{Timeline: timeline}
		var n, m int
		before, n = servicetest.Rate(r, 0, cut.TS)
		after, m = servicetest.Rate(r, last, math.Inf(1))
		return n > 0 && m > 0 && after >= before/2
	}
	r, atPaceAgain := servicetest.RunUntil(t, zookeeper.Backend(c), nodes, 60*time.Second, 5*time.Second,
		servicetest.Phase(zookeeper.Name, 4*time.Second, func(ph *workload.Phase) {
			ph.Faults = []string{"partition:node=0,at=2s,d=1s"}
		}), atPace)
	servicetest.Event(t, r, "cut off")
	servicetest.Event(t, r, "reachable again")
	if !atPaceAgain || r.Safety.Overlaps != 0 {
		t.Errorf("zk-lock after a 1 s partition: %.0f acquires/s before the cut, %.0f in the last second after the heal, %d overlaps; want it back at half the pace or better, safe",
			before, after, r.Safety.Overlaps)
	}
}
