package etcd

import (
	"context"
	"strings"

	"github.com/spf13/pflag"

	"github.com/lockbench/lockbench/internal/usage"
	"github.com/lockbench/lockbench/services"
	"github.com/lockbench/lockbench/services/internal/adapter"
)

// etcd registers itself: --etcd, --etcd-members, a spawned cluster without an address.
func init() {
	adapter.Register(services.Service{Name: Service, Title: "etcd", Order: 10},
		"etcd for etcd-mutex: host:port or http://[user:password@]host:port, comma-separated for a cluster (default: spawn etcd on loopback)",
		func(fs *pflag.FlagSet, addr *string) services.Flags {
			f := &flags{addr: addr}
			fs.IntVar(&f.members, "etcd-members", 1, "members of the etcd cluster spawned without --etcd: 1, or 3 or 5 for a quorum")
			return f
		})
}

type flags struct {
	addr    *string
	members int
}

func (f *flags) Check() error {
	if err := services.CheckList("etcd", *f.addr, true); err != nil {
		return err
	}
	if m := f.members; m < 1 || m > 7 || m%2 == 0 {
		return usage.Errorf("invalid --etcd-members %d: valid 1, 3, 5 or 7 (an even count adds a member without adding a failure the quorum survives)", m)
	}
	return nil
}

func (f *flags) Open(ctx context.Context, need services.Need) (services.Conn, error) {
	c, err := adapter.Open(ctx, need, "etcd", *f.addr, Dial, func(ctx context.Context) (*Conn, error) { return Spawn(ctx, f.members) })
	if err != nil {
		return nil, err
	}
	return c.adapt(), nil
}

// adapt is c as the registry hands it out.
func (c *Conn) adapt() *adapter.Conn {
	a := &adapter.Conn{Client: c, Title: "etcd", Flag: "etcd", Replaces: []string{"etcd", "etcd-members"},
		Addrs: c.Addrs(), Processes: c.servers, Via: &c.Via, Version: c.Version, CostUnit: CostUnit}
	if strings.HasPrefix(c.Version, "3.4") {
		a.More = []string{"etcd " + c.Version + " catches up a waiter's watch on its predecessor only every 100 ms: under contention etcd-mutex settles near 10 acquires/s per waiting worker with an acquire p50 near 100 ms while the server idles; that is etcd's watch catch-up, not the lock's cost"}
	}
	return a
}
