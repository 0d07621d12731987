package zookeeper

import (
	"context"

	"github.com/lockbench/lockbench/services"
	"github.com/lockbench/lockbench/services/internal/adapter"
	"github.com/lockbench/lockbench/workload"
)

// ZooKeeper registers itself: --zookeeper, a spawned server without an address.
func init() {
	adapter.RegisterAddr(services.Service{Name: Service, Title: "ZooKeeper", Order: 20},
		"ZooKeeper for zk-lock: host:port[,host:port...] or zk://[user:password@]host:port (default: spawn one on loopback)",
		adapter.Addr[*Conn]{
			Check: func(addr string) error { return services.CheckList("zookeeper", addr, true) },
			Dial:  Dial,
			Spawn: func(ctx context.Context, _ services.Need) (*Conn, error) { return Spawn(ctx) },
			Adapt: (*Conn).adapt,
		})
}

// adapt is c as the registry hands it out. A holder that checks its lease before writing
// (--on-lost abort) takes a lost connection as a lost lock, as Curator tells its users to
// (SUSPENDED).
func (c *Conn) adapt(need services.Need) *adapter.Conn {
	c.LostOnSuspended = need.OnLost == workload.OnLostAbort
	return &adapter.Conn{Client: c, Title: "ZooKeeper", Flag: "zookeeper", Replaces: []string{"zookeeper"},
		Addrs: c.Addrs(), Processes: c.servers, Via: &c.Via, Version: c.Version, CostUnit: CostUnit, More: []string{c.LostNote()}}
}
