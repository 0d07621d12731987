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
	"testing"
	"time"

	"github.com/lockbench/lockbench/faults"
	"github.com/lockbench/lockbench/services/internal/servicetest"
	"github.com/lockbench/lockbench/services/zookeeper"
	"github.com/lockbench/lockbench/workload"
)

// The kill fault on the server: the clients reconnect once it is back on its data, their
// sessions (persisted with the data) survive the short outage, and the lock stays a lock.
func TestKillAndRestart(t *testing.T) {
	c := conn(t)
	p := c.Processes()[0]
	first := p.Pid()
	nodes := faults.ServiceNodes(zookeeper.Service, c.Addrs(), []faults.Server{p}, nil)
	// Six seconds: the JVM can take a few to start on a loaded machine, and a second must
	// follow its return.
	r := servicetest.RunOn(t, zookeeper.Backend{Conn: c}, nodes, 6*time.Second, 5*time.Second,
		servicetest.Phase(zookeeper.Name, 4*time.Second, func(ph *workload.Phase) {
			ph.Faults = []string{"kill:node=0,at=500ms,restart=200ms"}
		}))[0]
	servicetest.KilledAndBack(t, r, first, p.Pid())
	if r.Safety.Overlaps != 0 {
		t.Errorf("zk-lock across a restart of its server: %d overlaps, verdict %q; want none", r.Safety.Overlaps, r.Verdict)
	}
}

// A partition of a second: replies to creates are lost with the connection, and the server
// may have made the znode anyway. The lock finds its own again by its protected name once
// connected; left behind, such a znode would hold the lock for as long as the session
// lives, and every waiter behind it would wait out its timeout (seen: no acquire for
// seconds after the heal). So the lock is back to its pace within the phase.
func TestPartitionLeavesNoOrphan(t *testing.T) {
	c := conn(t)
	proxies := faults.NewProxies()
	for _, a := range c.Addrs() {
		proxies.Dial(a) // started before the phase, as the CLI does
	}
	c.Via = proxies.Dial
	t.Cleanup(func() { c.Via = nil; proxies.Close() })
	nodes := faults.ServiceNodes(zookeeper.Service, c.Addrs(), nil, proxies)
	r := servicetest.RunOn(t, zookeeper.Backend{Conn: c}, nodes, 4*time.Second, 5*time.Second,
		servicetest.Phase(zookeeper.Name, 4*time.Second, func(ph *workload.Phase) {
			ph.Faults = []string{"partition:node=0,at=500ms,d=1s"}
		}))[0]
	servicetest.Event(t, r, "cut off")
	servicetest.Event(t, r, "reachable again")
	first := servicetest.AcquiredAfter(r, 0) - servicetest.AcquiredAfter(r, 1) // half of it cut off
	last := servicetest.AcquiredAfter(r, 3)
	if last == 0 || last < first/2 || r.Safety.Overlaps != 0 {
		t.Errorf("zk-lock after a 1 s partition: %d acquired in the first second, %d in the last, %d overlaps; want it back at pace, safe", first, last, r.Safety.Overlaps)
	}
}
