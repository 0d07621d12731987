package postgres_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockbench/lockbench/faults"
	"github.com/lockbench/lockbench/services/internal/servicetest"
	"github.com/lockbench/lockbench/services/postgres"
	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/workload"
)

// One cluster serves most tests of the package: initdb takes about a second. The tests that
// use it take turns (sharedTurn), since they read its statement counts; the tests that
// kill or freeze a server spawn their own (own) and run beside them.
var (
	shared     *postgres.Conn
	sharedTurn sync.Mutex
)

func TestMain(m *testing.M) {
	servicetest.Main(m, installed(), "PostgreSQL", func(ctx context.Context) (*postgres.Conn, error) { return postgres.Spawn(ctx, 50) }, &shared)
}

// installed is whether the PostgreSQL binaries are there.
func installed() bool {
	_, _, err := postgres.Binaries()
	return err == nil
}

// conn is the shared cluster, held by t until it ends.
func conn(t *testing.T) *postgres.Conn {
	t.Helper()
	if shared == nil {
		servicetest.Missing(t, "PostgreSQL (postgresql)")
	}
	sharedTurn.Lock()
	t.Cleanup(sharedTurn.Unlock)
	return shared
}

// own spawns a cluster for t alone, stopped when t ends.
func own(t *testing.T) *postgres.Conn {
	t.Helper()
	if shared == nil {
		servicetest.Missing(t, "PostgreSQL (postgresql)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := postgres.Spawn(ctx, 50)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// Without faults pg-advisory is a lock: five sessions per key never overlap, and the cost per
// acquire is read from pg_stat_statements, which the spawned cluster loads: a lock and an
// unlock statement per acquire, over 1,000 acquires (at most a minute) so that the sessions'
// setup does not blur it on a slow machine.
func TestAdvisoryExcludes(t *testing.T) {
	t.Parallel()
	c := conn(t)
	if !c.Statements {
		t.Fatal("the spawned cluster has no pg_stat_statements")
	}
	r, _ := servicetest.RunUntil(t, postgres.Backend(c), nil, time.Minute, 10*time.Second,
		servicetest.Phase(postgres.Name, 2*time.Second, nil), servicetest.AcquiredAtLeast(1000))
	if r.Acquired == 0 || r.Safety.Overlaps != 0 || r.Verdict != "safe" || r.Errors != 0 {
		t.Fatalf("pg-advisory without faults: %d acquired, %d errors, verdict %q, safety %+v; want acquires, no overlap, safe", r.Acquired, r.Errors, r.Verdict, r.Safety)
	}
	if !r.Redis.Measured || r.Redis.CommandsPerAcquire < 1.5 || r.Redis.CommandsPerAcquire > 2.5 {
		t.Errorf("PostgreSQL statements per acquire %.2f (measured %v); want 2 (lock, unlock)", r.Redis.CommandsPerAcquire, r.Redis.Measured)
	}
	if r.Redis.CPUUS == 0 {
		t.Errorf("no PostgreSQL CPU measured over %d acquires", r.Acquired)
	}
}

// A paused holder keeps its advisory lock for the whole pause: there is no lease to lapse.
// Nobody overlaps; the waiters wait (the acquire latency shows it).
func TestProcessPauseWaits(t *testing.T) {
	t.Parallel()
	c := conn(t)
	fault := "process-pause:p=0.3,d=1s"
	r := servicetest.Run(t, postgres.Backend(c), 3*time.Second, 8*time.Second,
		servicetest.Phase(postgres.Name, 500*time.Millisecond, func(ph *workload.Phase) {
			ph.Hold, ph.Faults = servicetest.Hold(t, "50ms"), []string{fault}
		}))[0]
	if r.Safety.Overlaps != 0 || r.Verdict != "safe" || r.Acquired == 0 {
		t.Fatalf("pg-advisory under %s: %d acquired, verdict %q, safety %+v; want no overlap: the paused session keeps its lock", fault, r.Acquired, r.Verdict, r.Safety)
	}
	if r.LatencyUS.Acquire.Max < int64(time.Second/time.Microsecond)/2 {
		t.Errorf("acquire latency max %d µs under 1 s pauses of holders; want waiters held up by the paused holder", r.LatencyUS.Acquire.Max)
	}
}

// A session that dies releases its advisory locks at once: a waiter gets the lock as soon
// as the holder's backend is terminated, and the dead holder's release says it lost it.
func TestKilledSessionReleases(t *testing.T) {
	t.Parallel()
	c := conn(t)
	s, err := strategies.New(postgres.Name, strategies.Options{Service: c})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	key := "lockbench:test:killed"
	held, err := s.Acquire(ctx, key, "holder")
	if err != nil {
		t.Fatal(err)
	}
	short, scancel := context.WithTimeout(ctx, 300*time.Millisecond)
	_, err = s.Acquire(short, key, "waiter")
	scancel()
	if !errors.Is(err, strategies.ErrNotAcquired) {
		t.Fatalf("second owner while the lock is held: %v; want ErrNotAcquired", err)
	}
	if n := terminate(t, ctx, c, postgres.LockID(key)); n != 1 {
		t.Fatalf("terminated %d sessions holding the lock, want 1", n)
	}
	got, err := s.Acquire(ctx, key, "waiter")
	if err != nil {
		t.Fatalf("acquire after the holder's session was terminated: %v", err)
	}
	if err := held.Release(ctx); !errors.Is(err, strategies.ErrNotOwner) {
		t.Errorf("release by the terminated holder: %v; want ErrNotOwner", err)
	}
	if err := got.Release(ctx); err != nil {
		t.Errorf("release by the new holder: %v", err)
	}
}

func TestDialErrorsHidePasswords(t *testing.T) {
	_, err := postgres.Dial(context.Background(), "mysql://alice:s3cret@host:5432/db")
	if err == nil || strings.Contains(err.Error(), "s3cret") || !strings.Contains(err.Error(), "valid:") {
		t.Fatalf("Dial of a mysql URL: %v; want an error naming the valid forms, without the password", err)
	}
	if got := postgres.Redact("postgres://alice:s3cret@host/db?password=x2"); strings.Contains(got, "s3cret") || strings.Contains(got, "x2") {
		t.Errorf("Redact = %q", got)
	}
}

// The kill fault on the postmaster: every session dies with it, the server comes back on
// its data, the workers' new sessions take the locks again, and the next phase's cost is
// read on a new admin connection. The killed phase lasts until a second after the server
// is back has acquires (crash recovery takes seconds on a loaded machine), at most 90 s.
func TestKillAndRestart(t *testing.T) {
	t.Parallel()
	c := own(t)
	p := c.Process()
	first := p.Pid()
	nodes := faults.ServiceNodes(postgres.Service, []string{c.Addr()}, []faults.Server{p}, nil)
	r, _ := servicetest.RunUntil(t, postgres.Backend(c), nodes, 90*time.Second, 10*time.Second,
		servicetest.Phase(postgres.Name, 2*time.Second, func(ph *workload.Phase) {
			ph.Faults = []string{"kill:node=0,at=500ms,restart=200ms"}
		}), servicetest.AcquiredAfterEvent("restarted on its data", 1))
	servicetest.KilledAndBack(t, r, first, p.Pid())
	if r.Errors+r.Safety.LostLeases == 0 {
		t.Errorf("no error and no lost lease while the server was down")
	}
	after := servicetest.Run(t, postgres.Backend(c), 2*time.Second, 10*time.Second, servicetest.Phase(postgres.Name, 2*time.Second, nil))[0]
	if after.Acquired == 0 || after.Safety.Overlaps != 0 || !after.Redis.Measured {
		t.Errorf("the phase after the restart: %d acquired, %d overlaps, cost measured %v; want a measured lock", after.Acquired, after.Safety.Overlaps, after.Redis.Measured)
	}
}

// redis-pause freezes the postmaster and its backends, which run the sessions (stopping the
// postmaster alone changed nothing): waiters are held up for most of the 3 s pause, and the
// seconds inside it acquire next to nothing against the seconds before it. The phase lasts
// until the thawed server has served 50 acquires: ended as soon as it answered, it cut off
// the held-up waiters before their acquires completed, and the longest acquire it recorded
// was short (1 run in 3). On a busy machine the timeline may have no whole second
// inside the pause (its collector was seen stalled through it); the latency still tells.
func TestPauseFreezesTheSessions(t *testing.T) {
	t.Parallel()
	c := own(t)
	nodes := faults.ServiceNodes(postgres.Service, []string{c.Addr()}, []faults.Server{c.Process()}, nil)
	r, _ := servicetest.RunUntil(t, postgres.Backend(c), nodes, 60*time.Second, 10*time.Second,
		servicetest.Phase(postgres.Name, 2*time.Second, func(ph *workload.Phase) {
			ph.Faults = []string{"redis-pause:node=0,at=2s,d=3s"}
		}), servicetest.AcquiredAfterEvent("answers again", 50))
	frozen := servicetest.Event(t, r, "frozen (SIGSTOP)")
	thawed := servicetest.Event(t, r, "answers again")
	if held := time.Duration(r.LatencyUS.Acquire.Max) * time.Microsecond; held < 2*time.Second {
		t.Errorf("longest acquire %s under a 3 s freeze; want waiters held up by the frozen backends for 2 s or more", held)
	}
	before, n := servicetest.Rate(r, 0, frozen.TS)
	during, m := servicetest.Rate(r, frozen.TS, thawed.TS)
	if n > 0 && m > 0 && (before == 0 || during > before/4) {
		t.Errorf("frozen from %.2fs to %.2fs: %.0f acquires/s before, %.0f inside the pause; want a dip below a quarter", frozen.TS, thawed.TS, before, during)
	}
}

// Dial's failures are one line each: pgx writes a line per attempt (TLS, then plain) under
// a header. A silent port says the bound; a word that is no address is refused before any
// lookup.
func TestDialErrorsAreOneLine(t *testing.T) {
	c := conn(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0") // accepts (the kernel's backlog), never answers
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	refused, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refusedAddr := refused.Addr().String()
	refused.Close()
	for _, tc := range []struct{ addr, want string }{
		{"notaurl", "is not a PostgreSQL address"},
		{"postgres://postgres@" + c.Addr() + "/nodb", `database "nodb" does not exist`},
		{refusedAddr, "connection refused"},
		{ln.Addr().String(), "does not answer within 1s"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := postgres.Dial(ctx, tc.addr)
		cancel()
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("Dial(%s): %v; want one line saying %q", tc.addr, err, tc.want)
		}
	}
}
