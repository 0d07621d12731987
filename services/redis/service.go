package redis

import (
	"strings"

	"github.com/spf13/pflag"

	"github.com/lockbench/lockbench/services"
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

// Home is Redis reached for a run, as the registry hands it out: the Conn, and what the
// session asks of every service.
type Home struct{ *Conn }

// Backend is Redis as the engine drives it.
func (h *Home) Backend() workload.Backend { return h.Conn.Backend() }

// Members are the data nodes, with their processes when lockbench spawned them.
func (h *Home) Members() ([]string, []services.Server) {
	return h.Addrs, services.AsServers(h.Servers)
}

// Route does nothing: Redis's clients dial through the proxies from their first connection
// on (services.Need.Via), and its node faults know its roles (faults.NewNodes).
func (h *Home) Route(func(string) string) {}

// Notes are none: where Redis ran is the report's target block, and its note comes first.
func (h *Home) Notes() []string { return nil }

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
