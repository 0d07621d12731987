package zookeeper_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/redact"
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
// acquire is read from the server's mntr, over 500 acquires (at most a minute). Sessions of
// 10 s: one that times out on a busy machine reconnects with its watches, where
// go-zookeeper races (see reconnect_test.go) — and there is no fault here to cause it.
func TestLockExcludes(t *testing.T) {
	c := conn(t)
	r, _ := servicetest.RunUntil(t, zookeeper.Backend(c), nil, time.Minute, 10*time.Second,
		servicetest.Phase(zookeeper.Name, 10*time.Second, nil), servicetest.AcquiredAtLeast(500))
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
// Session timeout 1 s (pings every 333 ms), pauses of 2 s with p=0.3 after holds of 200 ms;
// the phase runs its whole 10 s and ends as a run does, letting the frozen holders thaw and
// write: a phase cut short (as at Ctrl-C) would leave overlaps whose late writes nobody saw
// refused.
func TestProcessPauseFenced(t *testing.T) {
	c := conn(t)
	fault := "process-pause:p=0.3,d=2s"
	r := servicetest.Run(t, zookeeper.Backend(c), 10*time.Second, 8*time.Second,
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
			t.Errorf("Dial(%s): %v; want an error naming the valid forms, without the password", redact.Addr(addr), err)
		}
	}
}
