package target

import (
	"net"
	"time"

	"github.com/redis/rueidis"
)

// DefaultConnectTimeout bounds dialing a Redis server.
const DefaultConnectTimeout = 3 * time.Second

// ClientOption is the rueidis configuration lockbench uses for every connection:
// auto-pipelining on (rueidis's default: concurrent commands share a connection and are
// flushed together, which is what lets thousands of goroutines share a few sockets), and
// client-side caching off, since a lock must never be read from a local cache.
func ClientOption(addrs ...string) rueidis.ClientOption {
	return rueidis.ClientOption{
		InitAddress:  addrs,
		DisableCache: true,
		Dialer:       net.Dialer{Timeout: DefaultConnectTimeout, KeepAlive: time.Second},
	}
}

// NewClient connects to addrs (one standalone server, or a cluster's seed nodes; rueidis
// detects a cluster by itself).
func NewClient(addrs ...string) (rueidis.Client, error) {
	return rueidis.NewClient(ClientOption(addrs...))
}
