package zookeeper

import (
	"context"

	"github.com/spf13/pflag"

	"github.com/lockbench/lockbench/services"
	"github.com/lockbench/lockbench/services/internal/adapter"
	"github.com/lockbench/lockbench/workload"
)

// ZooKeeper registers itself: --zookeeper, a spawned server without an address.
func init() {
	adapter.Register(services.Service{Name: Service, Title: "ZooKeeper", Order: 20},
		"ZooKeeper for zk-lock: host:port[,host:port...] or zk://[user:password@]host:port (default: spawn one on loopback)",
		func(_ *pflag.FlagSet, addr *string) services.Flags { return &flags{addr} })
}

type flags struct{ addr *string }

func (f *flags) Check() error { return services.CheckList("zookeeper", *f.addr, true) }

func (f *flags) Open(ctx context.Context, need services.Need) (services.Conn, error) {
	c, err := adapter.Open(ctx, need, "zookeeper", *f.addr, Dial, Spawn)
	if err != nil {
		return nil, err
	}
	// A holder that checks its lease before writing (--on-lost abort) takes a lost
	// connection as a lost lock, as Curator tells its users to (SUSPENDED).
	c.LostOnSuspended = need.OnLost == workload.OnLostAbort
	return c.adapt(), nil
}

// adapt is c as the registry hands it out.
func (c *Conn) adapt() *adapter.Conn {
	return &adapter.Conn{Client: c, Title: "ZooKeeper", Flag: "zookeeper", Replaces: []string{"zookeeper"},
		Addrs: c.Addrs(), Processes: c.servers, Via: &c.Via, Version: c.Version, CostUnit: CostUnit, More: []string{c.LostNote()}}
}
