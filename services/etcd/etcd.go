// Package etcd measures etcd as a lock service: the strategy etcd-mutex (the client's
// concurrency.Mutex over a session lease, as Kubernetes-style Go services lock), its
// Scope (cost per acquire from the server's metrics endpoint), and a private
// etcd spawned on loopback when the run is given no address.
//
// The lease is the lock's ttl and the session's keep-alive its watchdog: a holder frozen
// longer than the lease (a stop-the-world pause freezes its keep-alives too) loses the lock
// to the next waiter, as a Redis lease does. The revision etcd grants the lock at is a
// fencing token (it only grows), so a resource that checks it refuses the late holder.
package etcd

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"

	"github.com/lockbench/lockbench/internal/redact"
	"github.com/lockbench/lockbench/internal/usage"
	"github.com/lockbench/lockbench/services/internal/server"
)

// Service is the name etcd strategies give in strategies.Info.Service.
const Service = "etcd"

// CostUnit says what the CMD/ACQ column counts for etcd.
const CostUnit = "etcd requests = gRPC messages the server received (grpc_server_msg_received_total, keep-alives included)"

// Conn is a connection to an etcd cluster: what Options.Service carries for etcd-mutex.
// The strategy dials clients of its own from Endpoints and the credentials (it replaces
// their lease keep-alive, see mutex.go); Client serves the Backend's own reads.
type Conn struct {
	Endpoints          []string // http(s)://host:port of every member
	Username, Password string
	TLS                bool
	Client             *clientv3.Client
	// Version is the server's version, from its /version endpoint ("" when unread).
	Version string
	// Via, when set, is where the strategy's clients connect instead of a member's
	// host:port: the fault proxies (partition, latency). Client, the Backend's own, keeps
	// the direct way, so that the cost and the cleanup are read past a partition.
	Via func(addr string) string

	servers []*server.Process // the spawned members, for their CPU; nil when external
	dir     string            // the spawned members' directory, removed by Close
}

// Dial connects to the etcd given as addr: host:port, http(s)://[user:password@]host:port,
// or several of them separated by commas (the members of one cluster). Credentials never
// appear in its errors.
func Dial(ctx context.Context, addr string) (*Conn, error) {
	c := &Conn{}
	for _, part := range strings.Split(addr, ",") {
		part = strings.TrimSpace(part)
		if !strings.Contains(part, "://") {
			part = "http://" + part
		}
		u, err := url.Parse(part)
		if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			return nil, &AddrError{Value: redact.Addr(part), Valid: "host:port, http://[user:password@]host:port, https://..., comma-separated for a cluster"}
		}
		if u.User != nil {
			c.Username = u.User.Username()
			c.Password, _ = u.User.Password()
		}
		c.TLS = c.TLS || u.Scheme == "https"
		c.Endpoints = append(c.Endpoints, u.Scheme+"://"+u.Host)
	}
	if err := c.connect(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// connect makes Client and checks that the cluster answers.
func (c *Conn) connect(ctx context.Context) error {
	cli, err := c.newClient(nil)
	if err != nil {
		return err
	}
	sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := cli.Status(sctx, c.Endpoints[0]); err != nil {
		cli.Close()
		return fmt.Errorf("etcd at %s does not answer: %w", strings.Join(c.Endpoints, ","), err)
	}
	c.Client = cli
	c.Version = version(ctx, c.Endpoints[0], c.tlsConfig())
	return nil
}

// newClient dials a client of the cluster, silent (its logger is a no-op), through via
// when it is not nil.
func (c *Conn) newClient(via func(string) string) (*clientv3.Client, error) {
	cfg := clientv3.Config{
		Endpoints:   c.Endpoints,
		Username:    c.Username,
		Password:    c.Password,
		TLS:         c.tlsConfig(),
		DialTimeout: 5 * time.Second,
		Logger:      zap.NewNop(),
	}
	if via != nil {
		cfg.DialOptions = []grpc.DialOption{grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "tcp", via(addr))
		})}
	}
	cli, err := clientv3.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("etcd client for %s: %w", strings.Join(c.Endpoints, ","), err)
	}
	return cli, nil
}

func (c *Conn) tlsConfig() *tls.Config {
	if !c.TLS {
		return nil
	}
	return &tls.Config{MinVersion: tls.VersionTLS12}
}

// Addrs are the members' host:port, for the report's target block.
func (c *Conn) Addrs() []string {
	out := make([]string, len(c.Endpoints))
	for i, e := range c.Endpoints {
		out[i] = strings.TrimPrefix(strings.TrimPrefix(e, "http://"), "https://")
	}
	return out
}

// Spawned reports whether lockbench started the members.
func (c *Conn) Spawned() bool { return c.servers != nil }

// Close closes Client and stops the members lockbench spawned. Safe to call twice.
func (c *Conn) Close() {
	if c.Client != nil {
		c.Client.Close()
		c.Client = nil
	}
	stopAll(c.servers)
	c.servers = nil
	removeDir(c.dir)
	c.dir = ""
}

// AddrError is an address lockbench cannot parse: a usage error (exit 2). Value has its
// password replaced by ***.
type AddrError struct{ Value, Valid string }

func (e *AddrError) Error() string {
	return fmt.Sprintf("%q is not an etcd address; valid: %s", e.Value, e.Valid)
}

// ExitCode is usage.ExitCode: the user's input is wrong.
func (e *AddrError) ExitCode() int { return usage.ExitCode }
