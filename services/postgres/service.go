package postgres

import (
	"context"

	"github.com/spf13/pflag"

	"github.com/lockbench/lockbench/services"
	"github.com/lockbench/lockbench/services/internal/adapter"
	"github.com/lockbench/lockbench/services/internal/server"
)

// PostgreSQL registers itself: --postgres, a server initdb'd and started without an
// address.
func init() {
	adapter.Register(services.Service{Name: Service, Title: "PostgreSQL", Order: 30},
		"PostgreSQL for pg-advisory: postgres://[user[:password]@]host[:port][/database] (default: initdb and start one on loopback)",
		func(_ *pflag.FlagSet, addr *string) services.Flags { return &flags{addr} })
}

type flags struct{ addr *string }

func (f *flags) Check() error { return nil }

func (f *flags) Open(ctx context.Context, need services.Need) (services.Conn, error) {
	c, err := adapter.Open(ctx, need, "postgres", *f.addr, Dial, func(ctx context.Context) (*Conn, error) {
		workers := 0 // a session per worker: the spawned server's max_connections
		for _, ph := range need.Phases {
			workers = max(workers, ph.Concurrency())
		}
		return Spawn(ctx, workers)
	})
	if err != nil {
		return nil, err
	}
	return c.adapt(), nil
}

// adapt is c as the registry hands it out. A child goes to the server lockbench spawned
// (trust authentication on loopback); an external one it reaches by the user's own
// --postgres.
func (c *Conn) adapt() *adapter.Conn {
	a := &adapter.Conn{Client: c, Title: "PostgreSQL", Flag: "postgres", Replaces: []string{"postgres"},
		Addrs: []string{c.Addr()}, Via: &c.Via, Version: c.Version, CostUnit: c.CostUnit()}
	if c.server != nil {
		a.Processes = []*server.Process{c.server}
	}
	return a
}
