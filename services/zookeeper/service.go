package zookeeper

import (
	"context"
	"strings"

	"github.com/spf13/pflag"

	"github.com/lockbench/lockbench/internal/proc"
	"github.com/lockbench/lockbench/services"
	"github.com/lockbench/lockbench/workload"
)

// ZooKeeper registers itself: --zookeeper, a spawned server without an address.
func init() {
	proc.RegisterTempNames("zookeeper")
	services.Register(services.Service{Name: Service, Title: "ZooKeeper", Secrets: []string{"zookeeper"}, Order: 20, Bind: func(fs *pflag.FlagSet) services.Flags {
		f := &flags{}
		fs.StringVar(&f.addr, "zookeeper", "", "ZooKeeper for zk-lock: host:port[,host:port...] or zk://[user:password@]host:port (default: spawn one on loopback)")
		return f
	}})
}

type flags struct{ addr string }

func (f *flags) Check() error { return services.CheckList("zookeeper", f.addr, true) }

func (f *flags) Open(ctx context.Context, need services.Need) (services.Conn, error) {
	var c *Conn
	var err error
	if f.addr != "" {
		c, err = services.Dial(ctx, need.ConnectTimeout, Dial, f.addr)
	} else {
		c, err = Spawn(ctx)
	}
	if err != nil {
		return nil, services.OpenError("zookeeper", f.addr, err)
	}
	// A holder that checks its lease before writing (--on-lost abort) takes a lost
	// connection as a lost lock, as Curator tells its users to (SUSPENDED).
	c.LostOnSuspended = need.OnLost == workload.OnLostAbort
	return conn{c}, nil
}

// conn is a Conn as the session sees it.
type conn struct{ *Conn }

func (c conn) Backend() workload.Backend { return Backend{Conn: c.Conn} }

func (c conn) Members() ([]string, []services.Server) {
	return c.Addrs(), services.AsServers(c.Processes())
}

func (c conn) Route(via func(string) string) { c.Via = via }

func (c conn) Notes() []string {
	return []string{services.Where(c.Spawned(), "ZooKeeper", c.Version, c.Addrs()) + "; " + CostUnit, c.LostNote()}
}

func (c conn) Child() (flags, replaced []string) {
	if !c.Spawned() {
		return nil, nil // the user's --zookeeper, its credentials included, as given
	}
	return []string{"--zookeeper=" + strings.Join(c.Addrs(), ",")}, []string{"zookeeper"}
}
