package postgres

import (
	"context"

	"github.com/spf13/pflag"

	"github.com/lockbench/lockbench/internal/proc"
	"github.com/lockbench/lockbench/services"
	"github.com/lockbench/lockbench/workload"
)

// PostgreSQL registers itself: --postgres, a server initdb'd and started without an
// address.
func init() {
	proc.RegisterTempNames("postgres")
	services.Register(services.Service{Name: Service, Title: "PostgreSQL", Secrets: []string{"postgres"}, Order: 30, Bind: func(fs *pflag.FlagSet) services.Flags {
		f := &flags{}
		fs.StringVar(&f.addr, "postgres", "", "PostgreSQL for pg-advisory: postgres://[user[:password]@]host[:port][/database] (default: initdb and start one on loopback)")
		return f
	}})
}

type flags struct{ addr string }

func (f *flags) Check() error { return nil }

func (f *flags) Open(ctx context.Context, need services.Need) (services.Conn, error) {
	var c *Conn
	var err error
	if f.addr != "" {
		c, err = services.Dial(ctx, need.ConnectTimeout, Dial, f.addr)
	} else {
		workers := 0 // a session per worker: the spawned server's max_connections
		for _, ph := range need.Phases {
			workers = max(workers, ph.Concurrency())
		}
		c, err = Spawn(ctx, workers)
	}
	if err != nil {
		return nil, services.OpenError("postgres", f.addr, err)
	}
	return conn{c}, nil
}

// conn is a Conn as the session sees it.
type conn struct{ *Conn }

func (c conn) Backend() workload.Backend { return Backend{Conn: c.Conn} }

func (c conn) Members() ([]string, []services.Server) {
	var ps []services.Server
	if p := c.Process(); p != nil {
		ps = []services.Server{p}
	}
	return []string{c.Addr()}, ps
}

func (c conn) Route(via func(string) string) { c.Via = via }

func (c conn) Notes() []string {
	return []string{services.Where(c.Spawned(), "PostgreSQL", c.Version, []string{c.Addr()}) + "; " + c.CostUnit()}
}

// Child sends a child to the server lockbench spawned (trust authentication on
// loopback); an external one the child reaches by the user's own --postgres.
func (c conn) Child() (flags, replaced []string) {
	if !c.Spawned() {
		return nil, nil
	}
	return []string{"--postgres=" + c.Addr()}, []string{"postgres"}
}
