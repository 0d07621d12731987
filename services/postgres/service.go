package postgres

import (
	"context"

	"github.com/lockbench/lockbench/services"
	"github.com/lockbench/lockbench/services/internal/adapter"
	"github.com/lockbench/lockbench/services/internal/server"
)

// PostgreSQL registers itself: --postgres, a server initdb'd and started without an
// address.
func init() {
	adapter.RegisterAddr(services.Service{Name: Service, Title: "PostgreSQL", Order: 30},
		"PostgreSQL for pg-advisory: postgres://[user[:password]@]host[:port][/database] (default: initdb and start one on loopback)",
		adapter.Addr[*Conn]{Dial: Dial, Spawn: spawn, Adapt: (*Conn).adapt})
}

// spawn starts a server with a session per worker: its max_connections.
func spawn(ctx context.Context, need services.Need) (*Conn, error) {
	workers := 0
	for _, ph := range need.Phases {
		workers = max(workers, ph.Concurrency())
	}
	return Spawn(ctx, workers)
}

// adapt is c as the registry hands it out. A child goes to the server lockbench spawned
// (trust authentication on loopback); an external one it reaches by the user's own
// --postgres.
func (c *Conn) adapt(services.Need) *adapter.Conn {
	a := &adapter.Conn{Client: c, Title: "PostgreSQL", Flag: "postgres", Replaces: []string{"postgres"},
		Addrs: []string{c.Addr()}, Via: &c.Via, Version: c.Version, CostUnit: c.CostUnit()}
	if c.server != nil {
		a.Processes = []*server.Process{c.server}
	}
	return a
}
