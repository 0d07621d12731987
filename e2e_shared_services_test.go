package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockbench/lockbench/services/etcd"
	"github.com/lockbench/lockbench/services/postgres"
	"github.com/lockbench/lockbench/services/zookeeper"
)

// sharedServers are etcd, ZooKeeper and PostgreSQL servers started once for the package,
// for the runs whose point is not spawning, killing or partitioning a service's server
// (those spawn their own: TestE2ECtrlCStopsServiceServers, TestE2EServiceStrategiesRunNextToToken,
// TestE2EKillActsOnTheServicesServer). A run reaches them as an external deployment, by
// --etcd, --zookeeper and --postgres. They start when the first test asks (under
// servicesSlot, like a run's own set-up) and TestMain stops them: none outlives the test
// binary (and their Pdeathsig kills them should the binary die first).
//
// etcd and ZooKeeper are shared by runs side by side: each run's keys and znodes are under
// its own random prefix, and so are the stuck locks and the cleanup of a phase. PostgreSQL
// is not: a phase of pg-advisory counts as stuck every advisory lock a lockbench session
// of the server holds, another run's too. A run has a PostgreSQL server to itself, taken
// from a pool that grows to as many as run at once and hands a server back when its test ends.
var sharedServers struct {
	once  sync.Once
	err   error
	etcd  *etcd.Conn
	zk    *zookeeper.Conn
	mu    sync.Mutex
	pgAll []*postgres.Conn
	pg    []*postgres.Conn // free
	done  bool             // stopped: no more servers
}

// sharedPostgresConns is the pool's servers' max_connections, less their margin: room for
// the services profile's fifty workers and the reading sessions.
const sharedPostgresConns = 100

// sharedServiceFlags returns the flags that point a run at the package's etcd and ZooKeeper
// and at a PostgreSQL server of its own until t ends, starting what is not started yet: for
// each of services ("etcd", "zookeeper", "postgres") the run has phases on.
func sharedServiceFlags(t *testing.T, services ...string) []string {
	t.Helper()
	requireServices(t)
	sharedServers.once.Do(func() {
		setUp := spawnsServices(t)
		defer setUp()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		var wg sync.WaitGroup
		var etcdErr, zkErr error
		wg.Go(func() {
			sharedServers.etcd, etcdErr = spawnRetried(ctx, func() (*etcd.Conn, error) { return etcd.Spawn(ctx, 1) })
		})
		wg.Go(func() {
			sharedServers.zk, zkErr = spawnRetried(ctx, func() (*zookeeper.Conn, error) { return zookeeper.Spawn(ctx) })
		})
		wg.Wait()
		switch {
		case etcdErr != nil:
			sharedServers.err = fmt.Errorf("spawn the shared etcd: %w", etcdErr)
		case zkErr != nil:
			sharedServers.err = fmt.Errorf("spawn the shared ZooKeeper: %w", zkErr)
		}
	})
	if sharedServers.err != nil {
		t.Fatal(sharedServers.err)
	}
	if sharedServers.etcd == nil || sharedServers.zk == nil {
		t.Fatal("the shared servers are stopped")
	}
	var flags []string
	for _, svc := range services {
		switch svc {
		case "etcd":
			flags = append(flags, "--etcd", strings.Join(sharedServers.etcd.Addrs(), ","))
		case "zookeeper":
			flags = append(flags, "--zookeeper", strings.Join(sharedServers.zk.Addrs(), ","))
		case "postgres":
			flags = append(flags, "--postgres", "postgres://postgres@"+takeSharedPostgres(t).Addr()+"/postgres?sslmode=disable")
		default:
			t.Fatalf("sharedServiceFlags: no shared %q", svc)
		}
	}
	t.Logf("shared servers: %q", flags)
	return flags
}

// allServices are the services a run of every service's strategy needs.
var allServices = []string{"etcd", "zookeeper", "postgres"}

// spawnRetried spawns a server with spawn, up to three times: the one start of the package's
// servers must not fail every test after it (beside two busy loops ZooKeeper once exited
// while starting).
func spawnRetried[C any](ctx context.Context, spawn func() (C, error)) (C, error) {
	var c C
	var err error
	for range 3 {
		if c, err = spawn(); err == nil || ctx.Err() != nil {
			break
		}
	}
	return c, err
}

// takeSharedPostgres takes a free server of the pool, or starts one, for t alone.
func takeSharedPostgres(t *testing.T) *postgres.Conn {
	t.Helper()
	s := &sharedServers
	s.mu.Lock()
	if s.done {
		s.mu.Unlock()
		t.Fatal("the shared servers are stopped")
	}
	var pg *postgres.Conn
	if n := len(s.pg); n > 0 {
		pg, s.pg = s.pg[n-1], s.pg[:n-1]
	}
	s.mu.Unlock()
	if pg == nil {
		// Not under servicesSlot, which is for the JVM's start: behind the runs that hold
		// it through their set-up, the services profile's parts waited a minute for theirs.
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		var err error
		pg, err = spawnRetried(ctx, func() (*postgres.Conn, error) { return postgres.Spawn(ctx, sharedPostgresConns) })
		cancel()
		if err != nil {
			t.Fatalf("spawn a shared PostgreSQL: %v", err)
		}
		s.mu.Lock()
		s.pgAll = append(s.pgAll, pg)
		s.mu.Unlock()
	}
	t.Cleanup(func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.pg = append(s.pg, pg)
	})
	return pg
}

// stopSharedServers stops what sharedServiceFlags started; TestMain calls it once the
// tests have ended.
func stopSharedServers() {
	s := &sharedServers
	s.once.Do(func() {}) // none started after this
	s.mu.Lock()
	defer s.mu.Unlock()
	s.done = true
	if s.etcd != nil {
		s.etcd.Close()
	}
	if s.zk != nil {
		s.zk.Close()
	}
	for _, pg := range s.pgAll {
		pg.Close()
	}
	s.pgAll, s.pg = nil, nil
}
