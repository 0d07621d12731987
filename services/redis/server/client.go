package server

import (
	"net"
	"time"

	"github.com/redis/rueidis"
)

// DefaultConnectTimeout bounds dialing a Redis server.
const DefaultConnectTimeout = 3 * time.Second

// ClientOption is the rueidis configuration lockbench uses for every connection:
//
//   - auto-pipelining on (rueidis's default): concurrent commands share a connection and are
//     flushed together, which is what lets thousands of goroutines share a few sockets;
//   - one pipelined connection per server (PipelineMultiplex -1; rueidis's default for a
//     single server is log2(GOMAXPROCS) -> 2 connections here) and a flush delay of up to
//     50µs, so that each write carries more commands. Measured on the 2-core machine
//     (token, 1000 workers, 100,000 keys): 69-84k acquires/s with rueidis's defaults,
//     97-113k/s with these, with less CPU per acquire on both sides (Redis 6.4-8.3 ->
//     5.0-5.6µs); the hot-key handoff chain did not get slower;
//   - client-side caching off, since a lock must never be read from a local cache.
func ClientOption(addrs ...string) rueidis.ClientOption {
	return rueidis.ClientOption{
		InitAddress:       addrs,
		DisableCache:      true,
		PipelineMultiplex: -1,
		MaxFlushDelay:     50 * time.Microsecond,
		Dialer:            net.Dialer{Timeout: DefaultConnectTimeout, KeepAlive: time.Second},
	}
}

// NewClient connects to addrs (one standalone server, or a cluster's seed nodes; rueidis
// detects a cluster by itself).
func NewClient(addrs ...string) (rueidis.Client, error) {
	return rueidis.NewClient(ClientOption(addrs...))
}
