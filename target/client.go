package target

import (
	"context"
	"crypto/tls"
	"net"
	"time"

	"github.com/redis/rueidis"
)

// DefaultConnectTimeout bounds dialing a Redis server.
const DefaultConnectTimeout = 3 * time.Second

// sentinelRefresh is how often a sentinel-mode client reconciles its master with the
// sentinels, in addition to following +switch-master events (rueidis recommends a few
// seconds; without it, one missed event binds the client to a demoted master for good).
const sentinelRefresh = 2 * time.Second

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

// dialer is how Open builds clients: ClientOption plus the connect timeout, the address
// rewrite of the fault layer, and the settings of the kind of server on the other end.
type dialer struct {
	timeout time.Duration       // per dial and for the first PING; 0 = DefaultConnectTimeout
	rewrite func(string) string // Spec.Dial; nil = none
	fake    bool                // miniredis: RESP2, one connection kind, no cluster probing
}

// option returns the client options for addrs. masterSet, when not empty, makes a
// sentinel-mode client: addrs are then sentinels and the client follows their master.
func (d dialer) option(masterSet string, addrs ...string) rueidis.ClientOption {
	opt := ClientOption(addrs...)
	opt.Dialer.Timeout = d.connectTimeout()
	if d.rewrite != nil {
		rewrite := d.rewrite
		// DialCtxFn is used for every connection the client makes, including the ones to
		// addresses it learns later from a sentinel or a cluster's slot map.
		opt.DialCtxFn = func(ctx context.Context, addr string, nd *net.Dialer, _ *tls.Config) (net.Conn, error) {
			return nd.DialContext(ctx, "tcp", rewrite(addr))
		}
	}
	if d.fake {
		// miniredis: a subscription on a RESP3 connection breaks the connection it shares
		// with commands, and rueidis would otherwise take it for a cluster (see
		// ECOSYSTEM.md).
		opt.AlwaysRESP2 = true
		opt.ForceSingleClient = true
	}
	if masterSet != "" {
		opt.Sentinel = rueidis.SentinelOption{
			MasterSet:               masterSet,
			Dialer:                  opt.Dialer,
			TopologyRefreshInterval: sentinelRefresh,
		}
	}
	return opt
}

func (d dialer) connectTimeout() time.Duration {
	if d.timeout > 0 {
		return d.timeout
	}
	return DefaultConnectTimeout
}
