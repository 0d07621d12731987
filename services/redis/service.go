package redis

import (
	"strings"

	"github.com/spf13/pflag"

	"github.com/lockbench/lockbench/services"
	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/workload"
)

// Name is Redis's name in the registry.
const Name = "redis"

func init() {
	services.Register(services.Service{
		Name: Name, Title: "Redis", Home: true,
		Secrets: []string{"password", "sentinel-password", "redis", "sentinel"}, // URLs may hold user:password@
		Bind: func(fs *pflag.FlagSet) services.Flags {
			f := &Flags{}
			f.Bind(fs)
			return f
		},
	})
}

// Home is Redis reached for a run, as the registry hands it out: the Conn, a
// services.Conn (its Backend, its Close), a services.HasChild, and what the node faults
// discover by type assertion (faults_seam.go: services.HasMembers, faults.Described,
// faults.NodeClients, faults.Failoverable). Of it the session asks also the replica check;
// its barrier and clock are its Backend's (workload.BarrierStore, workload.Clock).
type Home struct{ *Conn }

var (
	_ services.Conn     = (*Home)(nil)
	_ services.HasChild = (*Home)(nil)
)

// Name is "Redis".
func (h *Home) Name() string { return h.Conn.Backend().Name() }

// Configure hands the strategy the clients (Backend.Configure).
func (h *Home) Configure(o *strategies.Options) { h.Conn.Backend().Configure(o) }

// Scope is Backend.Scope.
func (h *Home) Scope(info strategies.Info, prefix string) workload.Scope {
	return h.Conn.Backend().Scope(info, prefix)
}

// Child are the flags that send a child of a --procs fleet to this same Redis: the servers
// spawned (or a `target up` state file's), found by address; they replace the user's.
func (c *Conn) Child() (flags, replaced []string) {
	switch {
	case len(c.SentinelAddrs) > 0:
		flags = []string{"--sentinel=" + strings.Join(c.SentinelAddrs, ","), "--master=" + c.MasterName}
	case c.Topology == Cluster:
		flags = []string{"--redis=" + c.Addrs[0]}
	default:
		flags = []string{"--redis=" + strings.Join(c.Addrs, ",")}
	}
	return flags, []string{"redis", "sentinel", "master", "topology", "state"}
}
