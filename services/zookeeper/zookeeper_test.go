package zookeeper_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/faults"
	"github.com/lockbench/lockbench/services/internal/servicetest"
	"github.com/lockbench/lockbench/services/zookeeper"
	"github.com/lockbench/lockbench/workload"
)

// One ZooKeeper serves every test of the package: the JVM takes a while to start.
var shared *zookeeper.Conn

const jar = "/usr/share/java/zookeeper.jar"

func TestMain(m *testing.M) {
	servicetest.Main(m, servicetest.Installed(jar), "ZooKeeper", zookeeper.Spawn, &shared)
}

func conn(t *testing.T) *zookeeper.Conn {
	t.Helper()
	servicetest.Require(t, "ZooKeeper (zookeeperd)", jar)
	return shared
}

// Without faults zk-lock is a lock: five workers per key never overlap, and the cost per
// acquire is read from the server's mntr.
func TestLockExcludes(t *testing.T) {
	c := conn(t)
	r := servicetest.Run(t, zookeeper.Backend{Conn: c}, 1500*time.Millisecond, 5*time.Second,
		servicetest.Phase(zookeeper.Name, 2*time.Second, nil))[0]
	if r.Acquired == 0 || r.Safety.Overlaps != 0 || r.Verdict != "safe" || r.Errors != 0 {
		t.Fatalf("zk-lock without faults: %d acquired, %d errors, verdict %q, safety %+v; want acquires, no overlap, safe", r.Acquired, r.Errors, r.Verdict, r.Safety)
	}
	if !r.Redis.Measured || r.Redis.CommandsPerAcquire < 1 || r.Redis.CommandsPerAcquire > 50 {
		t.Errorf("ZooKeeper packets per acquire %.2f (measured %v); want a few (create, children, exists, delete)", r.Redis.CommandsPerAcquire, r.Redis.Measured)
	}
	if r.Redis.CPUUS == 0 {
		t.Errorf("no ZooKeeper CPU measured over %d acquires", r.Acquired)
	}
	kids, _, err := c.Client.Children(zookeeper.Root)
	if err != nil {
		t.Fatal(err)
	}
	if len(kids) != 0 {
		t.Errorf("%d lock znodes left after the phase's cleanup, e.g. %s", len(kids), kids[0])
	}
}

// A process pause longer than the session timeout freezes the client's pings with its
// holder: ZooKeeper expires the session, deletes its znode and the next waiter (watching
// it) enters while the frozen holder still thinks it holds the lock — overlaps. The znode's
// sequence fences them: the late holder's write carries a lower sequence than the one the
// resource accepted from its successor, and is refused.
//
// Session timeout 1 s (pings every 333 ms), pauses of 2 s with p=0.3 after holds of 200 ms.
func TestProcessPauseFenced(t *testing.T) {
	c := conn(t)
	fault := "process-pause:p=0.3,d=2s"
	r := servicetest.Run(t, zookeeper.Backend{Conn: c}, 4*time.Second, 8*time.Second,
		servicetest.Phase(zookeeper.Name, time.Second, func(ph *workload.Phase) {
			ph.Hold, ph.Faults = servicetest.Hold(t, "200ms"), []string{fault}
		}))[0]
	if r.Safety.Overlaps == 0 || r.Safety.StaleFences == 0 || r.Verdict != "safe (fenced)" {
		t.Fatalf("zk-lock under %s: verdict %q, safety %+v; want overlaps whose late writes were refused: \"safe (fenced)\"", fault, r.Verdict, r.Safety)
	}
	if r.Safety.StaleWrites != 0 || r.Safety.FenceRegressions != 0 || r.Safety.FenceReuses != 0 {
		t.Errorf("sequence fence: safety %+v; want no stale write, regression or reuse", r.Safety)
	}
}

func TestDialErrorsHidePasswords(t *testing.T) {
	for _, addr := range []string{"http://alice:s3cret@host:2181", "zk://alice:s3cret@host"} {
		_, err := zookeeper.Dial(context.Background(), addr)
		if err == nil || strings.Contains(err.Error(), "s3cret") || !strings.Contains(err.Error(), "valid:") {
			t.Errorf("Dial(%s): %v; want an error naming the valid forms, without the password", zookeeper.Redact(addr), err)
		}
	}
}

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
