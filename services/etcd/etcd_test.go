package etcd_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/lockbench/lockbench/faults"
	"github.com/lockbench/lockbench/internal/redact"
	"github.com/lockbench/lockbench/services/etcd"
	"github.com/lockbench/lockbench/services/internal/servicetest"
	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/workload"
)

// One etcd serves every test of the package: spawning costs ~0.5 s. The tests that use it
// take turns (sharedTurn), since they read its request counts and keys; the tests with a
// cluster of their own run beside them.
var (
	shared     *etcd.Conn
	sharedTurn sync.Mutex
)

func TestMain(m *testing.M) {
	servicetest.Main(m, servicetest.Installed("etcd", "/usr/bin/etcd"), "etcd", func(ctx context.Context) (*etcd.Conn, error) { return etcd.Spawn(ctx, 1) }, &shared)
}

// conn is the shared etcd, held by t until it ends.
func conn(t *testing.T) *etcd.Conn {
	t.Helper()
	require(t)
	sharedTurn.Lock()
	t.Cleanup(sharedTurn.Unlock)
	return shared
}

func require(t *testing.T) {
	t.Helper()
	servicetest.Require(t, "etcd (etcd-server)", "etcd", "/usr/bin/etcd")
}

// Without faults etcd-mutex is a lock: contended by five workers per key, nobody ever
// overlaps, and the cost per acquire is read from the server (a handful of requests: the
// lock's transaction, the release's, the waiters' watches and gets), over 500 acquires (at
// most a minute) so that the sessions' own requests do not blur it on a slow machine.
func TestMutexExcludes(t *testing.T) {
	t.Parallel()
	c := conn(t)
	r, _ := servicetest.RunUntil(t, etcd.Backend(c), nil, time.Minute, 10*time.Second,
		servicetest.Phase(etcd.Name, 2*time.Second, nil), servicetest.AcquiredAtLeast(500))
	if r.Acquired == 0 || r.Safety.Overlaps != 0 || r.Verdict != "safe" || r.Errors != 0 {
		t.Fatalf("etcd-mutex without faults: %d acquired, %d errors, verdict %q, safety %+v; want acquires, no overlap, safe", r.Acquired, r.Errors, r.Verdict, r.Safety)
	}
	if !r.Redis.Measured || r.Redis.CommandsPerAcquire < 1 || r.Redis.CommandsPerAcquire > 50 {
		t.Errorf("etcd requests per acquire %.2f (measured %v); want a few (one transaction to lock, one to release, plus the waiters')", r.Redis.CommandsPerAcquire, r.Redis.Measured)
	}
	if r.Redis.CPUUS == 0 {
		t.Errorf("no etcd CPU measured over %d acquires", r.Acquired)
	}
	if r.Safety.StuckKeys != 0 {
		t.Errorf("%d stuck keys", r.Safety.StuckKeys)
	}
	left, err := c.Client.Get(context.Background(), "lockbench", clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	if len(left.Kvs) != 0 {
		t.Errorf("%d keys left after the phase's cleanup, e.g. %s", len(left.Kvs), left.Kvs[0].Key)
	}
}

// A process pause longer than the lease freezes the session's keep-alive with its holder:
// the lease lapses, etcd deletes the holder's key and the next waiter enters while the
// frozen holder still thinks it holds the lock — overlaps. The revision fence makes them
// harmless: the late holder's write carries a lower revision than the one the resource
// accepted from its successor, and is refused.
//
// Lease 2 s (etcd's minimum), keep-alive every 667 ms, pauses of 3 s with p=0.3 after holds
// of 200 ms: a frozen holder's lease lapses at least 1/3 s before it thaws, with four
// waiters watching. Acquires may wait behind a frozen holder for up to 3 s: the acquire
// timeout is 8 s so that waiting is not counted as failure. The phase runs its whole 10 s
// and ends as a run does, letting the frozen holders thaw and write: a phase cut short
// (as at Ctrl-C) would leave overlaps whose late writes nobody saw refused.
func TestProcessPauseFenced(t *testing.T) {
	t.Parallel()
	c := conn(t)
	fault := "process-pause:p=0.3,d=3s"
	r := servicetest.Run(t, etcd.Backend(c), 10*time.Second, 8*time.Second,
		servicetest.Phase(etcd.Name, 2*time.Second, func(ph *workload.Phase) {
			ph.Hold, ph.Faults = servicetest.Hold(t, "200ms"), []string{fault}
		}))[0]
	if r.Safety.Overlaps == 0 || r.Safety.StaleFences == 0 || r.Verdict != "safe (fenced)" {
		t.Fatalf("etcd-mutex under %s: verdict %q, safety %+v; want overlaps whose late writes were refused: \"safe (fenced)\"", fault, r.Verdict, r.Safety)
	}
	if r.Safety.StaleWrites != 0 || r.Safety.FenceRegressions != 0 || r.Safety.FenceReuses != 0 {
		t.Errorf("revision fence: safety %+v; want no stale write, regression or reuse", r.Safety)
	}
	if r.Safety.LostLeases == 0 {
		t.Errorf("no release found its lease lapsed: safety %+v", r.Safety)
	}
}

func TestDialErrorsHidePasswords(t *testing.T) {
	_, err := etcd.Dial(context.Background(), "ftp://alice:s3cret@host:2379")
	if err == nil || strings.Contains(err.Error(), "s3cret") || !strings.Contains(err.Error(), "valid:") {
		t.Fatalf("Dial of an ftp URL: %v; want an error naming the valid forms, without the password", err)
	}
	if got := redact.Addr("http://alice:s3cret@host:2379"); strings.Contains(got, "s3cret") || !strings.Contains(got, "alice") {
		t.Errorf("Redact = %q", got)
	}
}

func TestLeaseSeconds(t *testing.T) {
	for ttl, want := range map[time.Duration]int64{100 * time.Millisecond: 2, 2 * time.Second: 2, 2500 * time.Millisecond: 3, 10 * time.Second: 10} {
		if got := etcd.LeaseSeconds(ttl); got != want {
			t.Errorf("LeaseSeconds(%s) = %d, want %d", ttl, got, want)
		}
	}
}

// A three-member cluster: the lock holds the same way through a quorum, the cost is summed
// over the members (over 200 acquires, at most a minute: a quorum's writes are slow on a
// busy machine), and Close stops all three.
func TestThreeMembers(t *testing.T) {
	t.Parallel()
	c := threeMembers(t)
	if len(c.Endpoints) != 3 || len(c.Servers()) != 3 {
		t.Fatalf("%d endpoints, %d servers; want 3 of each", len(c.Endpoints), len(c.Servers()))
	}
	r, _ := servicetest.RunUntil(t, etcd.Backend(c), nil, time.Minute, 10*time.Second,
		servicetest.Phase(etcd.Name, 2*time.Second, nil), servicetest.AcquiredAtLeast(200))
	if r.Acquired == 0 || r.Safety.Overlaps != 0 || r.Verdict != "safe" || !r.Redis.Measured || r.Redis.CommandsPerAcquire < 1 {
		t.Fatalf("etcd-mutex on 3 members: %d acquired, verdict %q, safety %+v, %.2f requests per acquire; want acquires, safe, a cost", r.Acquired, r.Verdict, r.Safety, r.Redis.CommandsPerAcquire)
	}
	servers := c.Servers()
	c.Close()
	for _, p := range servers {
		select {
		case <-p.Exited():
		default:
			t.Errorf("member %d still running after Close", p.Pid())
		}
	}
}

// The kill fault on a member of three: the quorum carries on, the lock stays a lock, and
// the member comes back on its data (a new process) while the phase runs. The phase lasts
// until a second after the member is back has acquires (the member must be healthy again,
// which needs its peers and takes seconds on a loaded machine), at most 90 s. Leases of 6 s,
// not etcd's 2 s minimum: a keep-alive held up 2 s by a busy machine would let a lease lapse
// (TestProcessPauseFenced's subject, not this one's).
func TestKillOneOfThreeMembers(t *testing.T) {
	t.Parallel()
	c := threeMembers(t)
	first := c.Servers()[0].Pid()
	nodes := faults.ServiceNodes(etcd.Service, c.Addrs(), []faults.Server{c.Servers()[0], c.Servers()[1], c.Servers()[2]}, nil)
	fault := "kill:node=0,at=500ms,restart=300ms"
	r, _ := servicetest.RunUntil(t, etcd.Backend(c), nodes, 90*time.Second, 10*time.Second,
		servicetest.Phase(etcd.Name, 6*time.Second, func(ph *workload.Phase) { ph.Faults = []string{fault} }),
		servicetest.AcquiredAfterEvent("restarted on its data", 1))
	servicetest.KilledAndBack(t, r, first, c.Servers()[0].Pid())
	if r.Safety.Overlaps != 0 || r.Verdict != "safe" {
		t.Errorf("etcd-mutex with one of three members killed: verdict %q, safety %+v; want safe", r.Verdict, r.Safety)
	}
	killed := servicetest.Event(t, r, "killed (SIGKILL)")
	if n := servicetest.AcquiredAfter(r, killed.TS); n == 0 {
		t.Errorf("no acquire after the kill: the two members left should carry on")
	}
}

// threeMembers spawns a cluster of three for one test, stopped when it ends.
func threeMembers(t *testing.T) *etcd.Conn {
	t.Helper()
	require(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := etcd.Spawn(ctx, 3)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// A release whose request fails (a member killed under it: "request timed out") must not
// leave the holder's key behind: its session lives on and would keep the lock from every
// other owner until the run ends. Here the failure is a release sent with a context that has
// already ended; the next owner must get the lock without waiting out the session's lease.
// The lease is 30 s and the next owner waits 20 s at most (a generous bound for a loaded
// machine): only a key deleted, not one left to lapse, lets it in.
func TestFailedReleaseLeavesNoLockBehind(t *testing.T) {
	t.Parallel()
	c := conn(t)
	s, err := strategies.New(etcd.Name, strategies.Options{Params: strategies.Params{TTL: strategies.TTLOf(30 * time.Second)}, Service: c})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	held, err := s.Acquire(ctx, "failed-release", "a")
	if err != nil {
		t.Fatal(err)
	}
	gone, stop := context.WithCancel(context.Background())
	stop()
	if err := held.Release(gone); err == nil {
		t.Fatal("a release with an ended context succeeded")
	}
	next, cancelNext := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancelNext()
	l, err := s.Acquire(next, "failed-release", "b")
	if err != nil {
		t.Fatalf("the next owner could not take the lock after a's release failed: %v", err)
	}
	_ = l.Release(context.Background())
}
