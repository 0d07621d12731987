package redis

import (
	"context"
	"crypto/tls"
	"net"
	"time"

	"github.com/redis/rueidis"

	"github.com/lockbench/lockbench/services/redis/server"
)

// sentinelRefresh is how often a sentinel-mode client reconciles its master with the
// sentinels, in addition to following +switch-master events (rueidis recommends a few
// seconds; without it, one missed event binds the client to a demoted master for good).
const sentinelRefresh = 2 * time.Second

// DefaultConnectTimeout bounds dialing a Redis server.
const DefaultConnectTimeout = server.DefaultConnectTimeout

// ClientOption is the rueidis configuration lockbench uses for every connection (see
// server.ClientOption).
func ClientOption(addrs ...string) rueidis.ClientOption { return server.ClientOption(addrs...) }

// NewClient connects to addrs (see server.NewClient).
func NewClient(addrs ...string) (rueidis.Client, error) { return server.NewClient(addrs...) }

// dialer is how Open builds clients: ClientOption plus the connect timeout, the address
// rewrite of the fault layer, the credentials and TLS of Spec.Auth (with the parts a URL
// overrides), and the settings of the kind of server on the other end.
type dialer struct {
	timeout time.Duration       // per dial and for the first PING; 0 = DefaultConnectTimeout
	rewrite func(string) string // Spec.Dial; nil = none
	fake    bool                // miniredis: RESP2, one connection kind, no cluster probing

	// The data nodes' credentials, TLS (nil = plain TCP) and database.
	user, password string
	tls            *tls.Config
	db             int
	// The sentinels' credentials and TLS, for a sentinel-mode client.
	sentinelUser, sentinelPassword string
	sentinelTLS                    *tls.Config
}

// newDialer is the dialer of a Spec, before any address's URL parts apply.
func newDialer(s Spec) dialer {
	a := s.Auth
	return dialer{timeout: s.ConnectTimeout, rewrite: s.Dial,
		user: a.Username, password: a.Password, tls: a.TLS,
		sentinelUser: a.SentinelUsername, sentinelPassword: a.SentinelPassword, sentinelTLS: a.TLS}
}

// forEndpoint applies what a data node's URL says (see Endpoint for the rule).
func (d dialer) forEndpoint(ep Endpoint) dialer {
	if ep.Username != "" {
		d.user = ep.Username
	}
	if ep.Password != "" {
		d.password = ep.Password
	}
	if ep.TLS && d.tls == nil {
		d.tls = defaultTLS()
	}
	d.db = ep.DB
	return d
}

// forSentinel applies what a sentinel's URL says: its credentials are the sentinels', its
// rediss:// turns TLS on for the sentinels and the master they name, its /db selects the
// master's database.
func (d dialer) forSentinel(ep Endpoint) dialer {
	if ep.Username != "" {
		d.sentinelUser = ep.Username
	}
	if ep.Password != "" {
		d.sentinelPassword = ep.Password
	}
	if ep.TLS {
		if d.tls == nil {
			d.tls = defaultTLS()
		}
		if d.sentinelTLS == nil {
			d.sentinelTLS = d.tls
		}
	}
	d.db = ep.DB
	return d
}

// defaultTLS is the TLS configuration of a rediss:// address without --tls settings: the
// system's CAs, and the server name taken from each address dialed (crypto/tls does that
// when ServerName is empty), which also suits the nodes a cluster or a sentinel names.
func defaultTLS() *tls.Config { return &tls.Config{MinVersion: tls.VersionTLS12} }

// option returns the client options for addrs. masterSet, when not empty, makes a
// sentinel-mode client: addrs are then sentinels and the client follows their master.
func (d dialer) option(masterSet string, addrs ...string) rueidis.ClientOption {
	opt := ClientOption(addrs...)
	opt.Dialer.Timeout = d.connectTimeout()
	opt.Username, opt.Password, opt.TLSConfig, opt.SelectDB = d.user, d.password, d.tls, d.db
	if d.rewrite != nil {
		rewrite := d.rewrite
		// DialCtxFn is used for every connection the client makes, including the ones to
		// addresses it learns later from a sentinel or a cluster's slot map. It replaces
		// rueidis's own dialing, TLS included: the server name comes from the address asked
		// for, not from the proxy's.
		opt.DialCtxFn = func(ctx context.Context, addr string, nd *net.Dialer, tc *tls.Config) (net.Conn, error) {
			if tc == nil {
				return nd.DialContext(ctx, "tcp", rewrite(addr))
			}
			if tc.ServerName == "" {
				tc = tc.Clone()
				tc.ServerName, _, _ = net.SplitHostPort(addr)
			}
			return (&tls.Dialer{NetDialer: nd, Config: tc}).DialContext(ctx, "tcp", rewrite(addr))
		}
	}
	if d.fake {
		// miniredis: a subscription on a RESP3 connection breaks the connection it shares
		// with commands, and rueidis would otherwise take it for a cluster.
		opt.AlwaysRESP2 = true
		opt.ForceSingleClient = true
	}
	if masterSet != "" {
		opt.Sentinel = rueidis.SentinelOption{
			MasterSet:               masterSet,
			Dialer:                  opt.Dialer,
			TLSConfig:               d.sentinelTLS,
			Username:                d.sentinelUser,
			Password:                d.sentinelPassword,
			TopologyRefreshInterval: sentinelRefresh,
		}
	}
	return opt
}

// replyTimeout is how long rueidis waits for a reply on a connection, the handshake's
// included, whatever the connect timeout: its ConnWriteTimeout, 10 times the TCP
// keep-alive (1s, server.ClientOption's) when left 0, as lockbench leaves it (a longer one
// would also be how long a frozen server goes unnoticed during a run).
const replyTimeout = 10 * time.Second

func (d dialer) connectTimeout() time.Duration {
	if d.timeout > 0 {
		return d.timeout
	}
	return DefaultConnectTimeout
}
