package target

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/redis/rueidis"
)

// Conn is a connected target: the clients a run uses and what the report says about them.
// Close it when done; its clients must not be used afterwards.
type Conn struct {
	// Mode is where Redis comes from: "external" (--redis or --sentinel), "spawned"
	// (redis-server processes lockbench started, now or with `lockbench target up`) or
	// "embedded" (miniredis inside this process).
	Mode string
	// Topology is single | redlock | sentinel | cluster.
	Topology string
	// Addrs are the data nodes: the addresses given with --redis; when spawned (now or by
	// `target up`) the servers in Servers order (sentinel: initial master, replica); for an
	// external sentinel topology the master the sentinels named at connect time.
	Addrs []string
	// SentinelAddrs are the sentinels of a sentinel topology, nil otherwise.
	SentinelAddrs []string
	// MasterName is the sentinel master set name of a sentinel topology ("" otherwise);
	// "lockbench" when spawned.
	MasterName string
	// RedisVersion is the server version as INFO reports it, or a description such as
	// "miniredis v2.40.0 (embedded)". "" when unknown.
	RedisVersion string
	// Note is a line the report must print with the results when not empty: it says why the
	// numbers may not mean what they seem (the embedded fake Redis), or what Open ignored
	// (a stale `target up` state file). Several notes are joined with "; ".
	Note string

	// Client reaches the Redis that single-node strategies lock on: the single server, the
	// first redlock master, the cluster, or — for sentinel — a sentinel-mode client that
	// follows failovers to whichever server is master.
	Client rueidis.Client
	// Nodes are independent masters, one client each, when the target is several standalone
	// servers (redlock's topology); nil otherwise. Nodes[0] is Client.
	Nodes []rueidis.Client

	// Servers are the data nodes lockbench spawned for this Conn and stops on Close, in this
	// order: single [0] = master; redlock [0..4] = the five masters (Nodes[i] talks to
	// Servers[i]); sentinel [0] = the initial master, [1] = its replica; cluster [0..2] =
	// the masters owning slots 0-5460, 5461-10922, 10923-16383. Nil for external and
	// embedded targets, and for a `target up` topology (its processes are not this Conn's).
	Servers []*Server
	// Sentinels are the sentinel processes spawned for a sentinel topology, nil otherwise.
	Sentinels []*Server
	// ReplicationVia is the address through which the replica and the sentinels reach the
	// initial master when Spec.ReplicationVia set one up; "" otherwise.
	ReplicationVia string

	closers []func()
}

// Close closes every client and stops whatever the target started, in reverse order of
// creation. Safe to call twice.
func (c *Conn) Close() {
	for i := len(c.closers) - 1; i >= 0; i-- {
		c.closers[i]()
	}
	c.closers = nil
}

func (c *Conn) onClose(f func()) { c.closers = append(c.closers, f) }

func (c *Conn) addNote(n string) {
	if c.Note != "" {
		c.Note += "; "
	}
	c.Note += n
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
// the redlock topology, and single-node strategies use the first. timeout bounds each dial
// (0 = DefaultConnectTimeout). Open is the entry point that also spawns; this is its
// --redis path.
func ConnectExternal(ctx context.Context, addrs []string, timeout time.Duration) (*Conn, error) {
	return connectExternal(ctx, addrs, dialer{timeout: timeout})
}

func connectExternal(ctx context.Context, addrs []string, d dialer) (*Conn, error) {
	if len(addrs) == 0 {
		return nil, errors.New("no Redis address given")
	}
	if err := checkAddrs("redis", addrs); err != nil {
		return nil, err
	}
	c := &Conn{Mode: "external", Addrs: addrs}
	// rueidis tells a cluster from a standalone server only when given one address (with
	// several it insists on a cluster), so the first address decides.
	first, err := d.dial(ctx, "", addrs[0])
	if err != nil {
		return nil, err
	}
	switch {
	case first.Mode() == rueidis.ClientModeCluster:
		// The other addresses are more seeds of the same cluster: one is enough for
		// rueidis to learn every node.
		c.Topology, c.Client = Cluster, first
		c.onClose(first.Close)
	case len(addrs) == 1:
		c.Topology, c.Client = Single, first
		c.onClose(first.Close)
	default:
		first.Close()
		c.Topology = Redlock
		if err := c.dialNodes(ctx, d, addrs); err != nil {
			return nil, err
		}
		if err := checkIndependent(ctx, addrs, c.Nodes); err != nil {
			c.Close()
			return nil, err
		}
	}
	c.RedisVersion = serverVersion(ctx, c.Client)
	return c, nil
}

// dialNodes connects one client per address (concurrently: a slow server costs one
// timeout, not one per server) and sets Nodes and Client; on error it closes c.
func (c *Conn) dialNodes(ctx context.Context, d dialer, addrs []string) error {
	nodes := make([]rueidis.Client, len(addrs))
	errs := make([]error, len(addrs))
	var wg sync.WaitGroup
	for i, a := range addrs {
		wg.Go(func() { nodes[i], errs[i] = d.dial(ctx, "", a) })
	}
	wg.Wait()
	for _, n := range nodes {
		if n != nil {
			c.onClose(n.Close)
		}
	}
	if err := errors.Join(errs...); err != nil {
		c.Close()
		return err
	}
	c.Nodes, c.Client = nodes, nodes[0]
	return nil
}

// checkIndependent makes sure several --redis servers are independent masters: not a
// cluster node among standalone ones, not a replica, not the same server under two
// addresses (same INFO run_id). A server whose INFO cannot be read is not checked.
func checkIndependent(ctx context.Context, addrs []string, nodes []rueidis.Client) error {
	bad := func(reason string) error {
		return &SpecError{Field: "redis", Value: strings.Join(addrs, ","), Reason: reason}
	}
	seen := map[string]string{} // run_id -> address
	for i, n := range nodes {
		if n.Mode() == rueidis.ClientModeCluster {
			return bad(fmt.Sprintf("%s is a cluster node but %s is not: several --redis addresses are either seeds of one cluster or independent standalone masters", addrs[i], addrs[0]))
		}
		ictx, cancel := context.WithTimeout(ctx, DefaultConnectTimeout)
		txt, err := n.Do(ictx, n.B().Info().Section("server", "replication").Build()).ToString()
		cancel()
		if err != nil {
			continue
		}
		if role := infoField(txt, "role"); role != "" && role != "master" {
			return bad(fmt.Sprintf("%s is a %s, not a master: several --redis addresses are independent masters (redlock's topology)", addrs[i], role))
		}
		id := infoField(txt, "run_id")
		if other, dup := seen[id]; dup && id != "" {
			return bad(fmt.Sprintf("%s and %s are the same server (run_id %s): redlock needs independent masters", other, addrs[i], id))
		}
		seen[id] = addrs[i]
	}
	return nil
}

// connectSentinel connects to a master that sentinels manage: the client asks the
// sentinels where the master is and follows failovers.
func connectSentinel(ctx context.Context, sentinels []string, master string, d dialer) (*Conn, error) {
	if err := checkAddrs("sentinel", sentinels); err != nil {
		return nil, err
	}
	cl, err := d.dial(ctx, master, sentinels...)
	if err != nil {
		return nil, err
	}
	c := &Conn{Mode: "external", Topology: "sentinel", SentinelAddrs: sentinels, MasterName: master, Client: cl}
	c.onClose(cl.Close)
	for addr := range cl.Nodes() {
		c.Addrs = append(c.Addrs, addr)
	}
	c.RedisVersion = serverVersion(ctx, cl)
	return c, nil
}

func checkAddrs(flag string, addrs []string) error {
	for _, a := range addrs {
		if _, port, err := net.SplitHostPort(a); err != nil || port == "" {
			return &AddrError{Flag: flag, Value: a}
		}
	}
	return nil
}

// AddrError is an address that is not host:port: a usage error (exit 2).
type AddrError struct {
	Flag  string // "redis" or "sentinel"; "" means "redis"
	Value string
}

func (e *AddrError) Error() string {
	flag, eg := e.Flag, "127.0.0.1:6379"
	if flag == "" {
		flag = "redis"
	}
	if flag == "sentinel" {
		eg = "127.0.0.1:26379"
	}
	return fmt.Sprintf("invalid --%s address %q: want host:port, e.g. %s (several: comma-separated)", flag, e.Value, eg)
}

// dial connects with the connect timeout and checks the server answers. masterSet, when
// not empty, makes a sentinel-mode client (addrs are then sentinels).
func (d dialer) dial(ctx context.Context, masterSet string, addrs ...string) (rueidis.Client, error) {
	timeout := d.connectTimeout()
	what := strings.Join(addrs, ",")
	if masterSet != "" {
		what = fmt.Sprintf("master %q via sentinels %s", masterSet, what)
	}
	c, err := rueidis.NewClient(d.option(masterSet, addrs...))
	if err != nil {
		return nil, &UnreachableError{Addr: what, Timeout: timeout, Err: err}
	}
	pctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := c.Do(pctx, c.B().Ping().Build()).Error(); err != nil {
		c.Close()
		return nil, &UnreachableError{Addr: what, Timeout: timeout, Err: err}
	}
	return c, nil
}

// serverVersion asks the first node behind c for its version; "" when INFO fails.
func serverVersion(ctx context.Context, c rueidis.Client) string {
	nodes := Nodes(c)
	if len(nodes) == 0 {
		return ""
	}
	ctx, cancel := context.WithTimeout(ctx, DefaultConnectTimeout)
	defer cancel()
	s, err := ReadStats(ctx, nodes[0].Client, nodes[0].Addr)
	if err != nil {
		return ""
	}
	return s.Version
}
