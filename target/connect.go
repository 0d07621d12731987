package target

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/redis/rueidis"
)

// Conn is a connected target: the clients a run uses and what the report says about them.
type Conn struct {
	Mode         string   // spawned | external | embedded
	Topology     string   // single | redlock | sentinel | cluster
	Addrs        []string // as given or spawned
	RedisVersion string

	// Client reaches the Redis that single-node strategies lock on (the cluster, the
	// sentinel-managed master, or the first server).
	Client rueidis.Client
	// Nodes are independent masters, one client each, when the target is several standalone
	// servers (redlock's topology); nil otherwise.
	Nodes []rueidis.Client

	closers []func()
}

// Close closes every client and stops whatever the target started.
func (c *Conn) Close() {
	for i := len(c.closers) - 1; i >= 0; i-- {
		c.closers[i]()
	}
	c.closers = nil
}

// UnreachableError reports a Redis server that did not answer within the connect timeout.
type UnreachableError struct {
	Addr    string
	Timeout time.Duration
	Err     error
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("cannot reach Redis at %s within %s: %v", e.Addr, e.Timeout, e.Err)
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// ConnectExternal connects to servers the user runs: one address is a single server or a
// cluster (rueidis detects which); several standalone addresses are independent masters,
// the redlock topology, and single-node strategies use the first.
func ConnectExternal(ctx context.Context, addrs []string, timeout time.Duration) (*Conn, error) {
	if len(addrs) == 0 {
		return nil, errors.New("no Redis address given")
	}
	for _, a := range addrs {
		if _, _, err := net.SplitHostPort(a); err != nil {
			return nil, &AddrError{Value: a}
		}
	}
	if timeout <= 0 {
		timeout = DefaultConnectTimeout
	}
	c := &Conn{Mode: "external", Addrs: addrs}
	first, err := dial(ctx, timeout, addrs...)
	if err != nil {
		return nil, err
	}
	c.closers = append(c.closers, first.Close)
	c.Client = first
	switch {
	case first.Mode() == rueidis.ClientModeCluster:
		c.Topology = "cluster"
	case len(addrs) == 1:
		c.Topology = "single"
	default:
		// rueidis fell back to the first address: the others are separate servers.
		first.Close()
		c.closers = nil
		c.Topology = "redlock"
		for _, a := range addrs {
			n, err := dial(ctx, timeout, a)
			if err != nil {
				c.Close()
				return nil, err
			}
			c.closers = append(c.closers, n.Close)
			c.Nodes = append(c.Nodes, n)
		}
		c.Client = c.Nodes[0]
	}
	c.RedisVersion = serverVersion(ctx, c.Client)
	return c, nil
}

// AddrError is an address that is not host:port.
type AddrError struct{ Value string }

func (e *AddrError) Error() string {
	return fmt.Sprintf("invalid --redis address %q: want host:port, e.g. 127.0.0.1:6379 (several: comma-separated)", e.Value)
}

// dial connects with the connect timeout and checks the server answers.
func dial(ctx context.Context, timeout time.Duration, addrs ...string) (rueidis.Client, error) {
	opt := ClientOption(addrs...)
	opt.Dialer.Timeout = timeout
	c, err := rueidis.NewClient(opt)
	if err != nil {
		return nil, &UnreachableError{Addr: strings.Join(addrs, ","), Timeout: timeout, Err: err}
	}
	pctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := c.Do(pctx, c.B().Ping().Build()).Error(); err != nil {
		c.Close()
		return nil, &UnreachableError{Addr: strings.Join(addrs, ","), Timeout: timeout, Err: err}
	}
	return c, nil
}

func serverVersion(ctx context.Context, c rueidis.Client) string {
	nodes := Nodes(c)
	if len(nodes) == 0 {
		return ""
	}
	s, err := ReadStats(ctx, nodes[0].Client, nodes[0].Addr)
	if err != nil {
		return ""
	}
	return s.Version
}
