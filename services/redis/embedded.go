package redis

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync"

	"github.com/alicebob/miniredis/v2"
)

// EmbeddedNote is the Conn.Note of an embedded target.
const EmbeddedNote = "embedded: an in-process fake Redis (miniredis) — these numbers measure lockbench against a Go map, not a Redis server; install redis-server (apt-get install redis-server) or pass --redis to measure Redis"

const miniredisModule = "github.com/alicebob/miniredis/v2"

// miniredisVersion is the version of miniredis built into this binary.
var miniredisVersion = sync.OnceValue(func() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range bi.Deps {
			if m.Path == miniredisModule {
				return m.Version
			}
		}
	}
	return "v2"
})

// openEmbedded starts miniredis servers on loopback ports inside this process: one for
// single, five independent ones for redlock. miniredis cannot replicate, fail over or
// shard, so sentinel and cluster are refused. A password makes them require it.
//
// Keys expire in real time (ClockTTL): miniredis otherwise only expires them when a test
// calls FastForward. The price is that every command walks and sorts every key to age
// its ttl, so the embedded target slows down as the key count grows.
func openEmbedded(ctx context.Context, topology, password string, d dialer) (*Conn, error) {
	n := 1
	switch topology {
	case Single:
	case Redlock:
		n = redlockMasters
	default:
		return nil, &SpecError{Field: "topology", Value: topology,
			Reason: "redis-server is not on PATH, and the embedded fake Redis (miniredis) cannot replicate, fail over or form a cluster; install redis-server (apt-get install redis-server), or pass --redis/--sentinel to use servers you run"}
	}
	c := &Conn{Mode: "embedded", Topology: topology, Note: EmbeddedNote,
		RedisVersion: fmt.Sprintf("miniredis %s (embedded)", miniredisVersion())}
	servers := make([]*miniredis.Miniredis, 0, n)
	c.onClose(func() {
		for _, m := range servers {
			m.Close()
		}
	})
	for range n {
		m := miniredis.NewMiniRedis()
		m.ClockTTL(true)
		if password != "" {
			m.RequireAuth(password)
		}
		if err := m.Start(); err != nil {
			c.Close()
			return nil, fmt.Errorf("start embedded miniredis: %w", err)
		}
		servers = append(servers, m)
		c.Addrs = append(c.Addrs, m.Addr())
	}
	d.fake = true
	if err := c.connectClients(ctx, d); err != nil {
		return nil, err
	}
	return c, nil
}
