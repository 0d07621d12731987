package redis

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
	// Addrs are the data nodes, as host:port (never a URL's credentials): the addresses
	// given with --redis; when spawned (now or by `target up`) the servers in Servers order
	// (sentinel: initial master, replica); for an external sentinel topology the master the
	// sentinels named at connect time.
	Addrs []string
	// SentinelAddrs are the sentinels of a sentinel topology (host:port), nil otherwise.
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

	// ClientOption and NodeOptions are how Client and each of Nodes were made, for code
	// that opens connections of its own to the same servers (the library adapters, which
	// use their library's client) with the same credentials, TLS, database and fault proxy.
	ClientOption rueidis.ClientOption
	NodeOptions  []rueidis.ClientOption

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

	runs    *runs // this run's entry in the registry of live runs' key prefixes (runs.go)
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

// ConnectExternal connects to servers the user runs: one address is a single server or a
// cluster (rueidis detects which); several standalone addresses are independent masters,
// the redlock topology, and single-node strategies use the first. Each address is one
// ParseAddr accepts; a URL's credentials, TLS and database apply to that address. timeout
// bounds each dial (0 = DefaultConnectTimeout). Open is the entry point that also spawns;
// this is its --redis path without Spec.Auth.
func ConnectExternal(ctx context.Context, addrs []string, timeout time.Duration) (*Conn, error) {
	eps, err := parseAddrs("redis", addrs)
	if err != nil {
		return nil, err
	}
	return connectExternal(ctx, eps, dialer{timeout: timeout})
}

func connectExternal(ctx context.Context, eps []Endpoint, d dialer) (*Conn, error) {
	if len(eps) == 0 {
		return nil, errNoAddr
	}
	addrs := hostPorts(eps)
	c := &Conn{Mode: "external", Addrs: addrs}
	// rueidis tells a cluster from a standalone server only when given one address (with
	// several it insists on a cluster), so the first address decides.
	first, opt, err := d.forEndpoint(eps[0]).dial(ctx, "", addrs[0])
	if err != nil {
		return nil, err
	}
	c.ClientOption = opt
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
		if err := c.dialNodes(ctx, d, eps); err != nil {
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
// timeout, not one per server), each with what its URL says, and sets Nodes and Client; on
// error it closes c.
func (c *Conn) dialNodes(ctx context.Context, d dialer, eps []Endpoint) error {
	nodes := make([]rueidis.Client, len(eps))
	opts := make([]rueidis.ClientOption, len(eps))
	errs := make([]error, len(eps))
	var wg sync.WaitGroup
	for i, ep := range eps {
		wg.Go(func() { nodes[i], opts[i], errs[i] = d.forEndpoint(ep).dial(ctx, "", ep.Addr) })
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
	c.NodeOptions, c.ClientOption = opts, opts[0]
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
		if role := InfoField(txt, "role"); role != "" && role != "master" {
			return bad(fmt.Sprintf("%s is a %s, not a master: several --redis addresses are independent masters (redlock's topology)", addrs[i], role))
		}
		id := InfoField(txt, "run_id")
		if other, dup := seen[id]; dup && id != "" {
			return bad(fmt.Sprintf("%s and %s are the same server (run_id %s): redlock needs independent masters", other, addrs[i], id))
		}
		seen[id] = addrs[i]
	}
	return nil
}

// connectSentinel connects to a master that sentinels manage: the client asks the
// sentinels where the master is and follows failovers. The sentinels share the
// credentials, TLS and database of the first address; the others must not say otherwise.
func connectSentinel(ctx context.Context, eps []Endpoint, master string, d dialer) (*Conn, error) {
	if len(eps) == 0 {
		return nil, errNoAddr
	}
	for _, ep := range eps[1:] {
		if ep.Username != eps[0].Username || ep.Password != eps[0].Password || ep.TLS != eps[0].TLS || ep.DB != eps[0].DB {
			return nil, &SpecError{Field: "sentinel", Value: strings.Join(hostPorts(eps), ","),
				Reason: "the sentinel URLs differ in credentials, scheme or database; one set serves all sentinels: give it in every URL alike, or with --sentinel-password and --tls"}
		}
	}
	sentinels := hostPorts(eps)
	cl, opt, err := d.forSentinel(eps[0]).dial(ctx, master, sentinels...)
	if err != nil {
		return nil, err
	}
	c := &Conn{Mode: "external", Topology: "sentinel", SentinelAddrs: sentinels, MasterName: master, Client: cl, ClientOption: opt}
	c.onClose(cl.Close)
	for addr := range cl.Nodes() {
		c.Addrs = append(c.Addrs, addr)
	}
	c.RedisVersion = serverVersion(ctx, cl)
	return c, nil
}

// dial connects with the connect timeout and checks the server answers; a failure is
// classified (see classify). masterSet, when not empty, makes a sentinel-mode client
// (addrs are then sentinels).
// It returns the options the client was made with, too.
func (d dialer) dial(ctx context.Context, masterSet string, addrs ...string) (rueidis.Client, rueidis.ClientOption, error) {
	opt := d.option(masterSet, addrs...)
	c, err := d.connect(ctx, opt)
	if err == nil {
		return c, opt, nil
	}
	if masterSet != "" {
		return nil, opt, d.diagnoseSentinel(ctx, masterSet, addrs, err)
	}
	return nil, opt, d.classify(ctx, "redis", strings.Join(addrs, ","), addrs[0], false, err)
}

// connect makes a client and PINGs through it; errors are the client library's.
func (d dialer) connect(ctx context.Context, opt rueidis.ClientOption) (rueidis.Client, error) {
	c, err := rueidis.NewClient(opt)
	if err != nil {
		return nil, err
	}
	pctx, cancel := context.WithTimeout(ctx, d.connectTimeout())
	defer cancel()
	if err := c.Do(pctx, c.B().Ping().Build()).Error(); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// diagnoseSentinel finds out whom the failure err of a sentinel-mode client is about: the
// sentinels (one by one, with their own credentials) or the master they name.
func (d dialer) diagnoseSentinel(ctx context.Context, master string, sentinels []string, err error) error {
	var first error
	for _, s := range sentinels {
		addr, serr := d.askSentinel(ctx, s, master)
		if serr == nil && addr == "" {
			return &SpecError{Field: "master", Value: master,
				Reason: fmt.Sprintf("the sentinel at %s monitors no master of that name (SENTINEL GET-MASTER-ADDR-BY-NAME); see SENTINEL MASTERS there", s)}
		}
		if serr == nil {
			// The sentinels answer: the master is the problem.
			return d.classify(ctx, "sentinel", fmt.Sprintf("master %q at %s (named by the sentinels)", master, addr), addr, false, err)
		}
		if re, ok := rueidis.IsRedisErr(serr); ok && strings.Contains(re.Error(), "unknown command") {
			return &SpecError{Field: "sentinel", Value: s,
				Reason: "is not a sentinel (it does not know the SENTINEL command): --sentinel takes the sentinels' addresses (port 26379 by default); a Redis server goes with --redis"}
		}
		serr = d.classify(ctx, "sentinel", s, s, true, serr)
		var ae *AuthError
		if first == nil || errors.As(serr, &ae) && !errors.As(first, &ae) {
			first = serr // an authentication failure is the one to fix first
		}
	}
	return first
}

// askSentinel asks the sentinel at addr, with the sentinels' credentials, where master is;
// "" when it does not know the name.
func (d dialer) askSentinel(ctx context.Context, addr, master string) (string, error) {
	sd := d
	sd.user, sd.password, sd.tls, sd.db = d.sentinelUser, d.sentinelPassword, d.sentinelTLS, 0
	opt := sd.option("", addr)
	opt.ForceSingleClient = true
	c, err := rueidis.NewClient(opt)
	if err != nil {
		return "", err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(ctx, d.connectTimeout())
	defer cancel()
	hp, err := c.Do(ctx, c.B().SentinelGetMasterAddrByName().Master(master).Build()).AsStrSlice()
	if rueidis.IsRedisNil(err) || err == nil && len(hp) != 2 {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return net.JoinHostPort(hp[0], hp[1]), nil
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
