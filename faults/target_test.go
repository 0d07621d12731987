package faults_test

import (
	"context"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/faults"
	"github.com/lockbench/lockbench/services"
	"github.com/lockbench/lockbench/services/redis"
	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/workload"
)

// Redis's connection is what the node faults ask of a home target, as optional interfaces.
var (
	_ services.HasMembers = (*redis.Home)(nil)
	_ faults.Described    = (*redis.Home)(nil)
	_ faults.NodeClients  = (*redis.Home)(nil)
	_ faults.Failoverable = (*redis.Home)(nil)
)

// bareTarget is a home target with the required services.Conn alone, and members and a
// description when given: what it lacks, a node fault on it is refused for.
type bareTarget struct{ addrs []string }

func (bareTarget) Name() string                                            { return "bare" }
func (bareTarget) Configure(*strategies.Options)                           {}
func (bareTarget) Scope(strategies.Info, string) workload.Scope            { return nil }
func (bareTarget) Close()                                                  {}
func (t bareTarget) Members() ([]string, []services.Server)                { return t.addrs, nil }
func (bareTarget) Target() (mode, topology string)                         { return "external", "single" }
func (bareTarget) FailoverMaster() (services.Server, string, string, bool) { return nil, "", "", false }
func (bareTarget) Master(context.Context) (string, error)                  { return "", nil }

// spawnedTarget is a bareTarget whose members lockbench spawned.
type spawnedTarget struct{ bareTarget }

func (t spawnedTarget) Members() ([]string, []services.Server) {
	return t.addrs, []services.Server{stubServer{}}
}

type stubServer struct{}

func (stubServer) Kill()                         {}
func (stubServer) Restart(context.Context) error { return nil }
func (stubServer) Pause() error                  { return nil }
func (stubServer) Resume() error                 { return nil }

// withoutMembers is the required services.Conn alone.
type withoutMembers struct{ bareTarget }

func (withoutMembers) Members() {} // hides bareTarget's: not a services.HasMembers

// The node faults find what a home target has by type assertion: its members count the
// node= field, its description names it in messages, and a target that cannot fail over
// has failover refused.
func TestNodeFaultsDiscoverTheTargetsParts(t *testing.T) {
	proxies := faults.NewProxies()
	t.Cleanup(proxies.Close)
	check := func(home services.Conn, spec string) error {
		t.Helper()
		specs, err := faults.ParseAll([]string{spec})
		if err != nil {
			t.Fatal(err)
		}
		_, err = faults.New(specs, 4, faults.NewNodes(home, proxies))
		return err
	}
	two := bareTarget{addrs: []string{"127.0.0.1:1", "127.0.0.1:2"}}
	if err := check(two, "redis-pause:node=1,at=1s,d=1s"); err != nil {
		t.Errorf("redis-pause on node 1 of two members: %v", err)
	}
	for _, tc := range []struct {
		home services.Conn
		spec string
		want string
	}{
		{two, "redis-pause:node=2,at=1s,d=1s", "node=2, but the single target has 2 data node(s): 0..1"},
		{withoutMembers{two}, "redis-pause:node=0,at=1s,d=1s", "node=0, but the single target has 0 data node(s)"},
		{two, "failover:at=1s", "failover needs the sentinel topology spawned by lockbench (--topology sentinel, no --redis); this target is external single"},
		{two, "kill:node=0,at=1s", "this target is external — drop --redis"},
		// spawned, with proxies, but no failover to offer
		{spawnedTarget{bareTarget{addrs: []string{"127.0.0.1:1"}}}, "failover:at=1s", "failover needs the sentinel topology"},
		{nil, "kill:node=0,at=1s", "node faults need a target"},
	} {
		err := check(tc.home, tc.spec)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s on %T: %v; want an error containing %q", tc.spec, tc.home, err, tc.want)
		}
	}
}
