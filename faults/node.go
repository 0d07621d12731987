package faults

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/rueidis"

	"github.com/lockbench/lockbench/internal/clock"
	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/services"
)

// Nodes is what node faults act on: the data nodes of the home service's target (Redis's,
// in the order of its members), or the members of another lock service (etcd, ZooKeeper,
// PostgreSQL) — with their processes when lockbench spawned them — and the proxies in
// front of them when a fault needs one.
type Nodes struct {
	home           services.Conn // the home service's target; nil for another service's nodes
	mode, topology string        // the home target's (Described)
	proxies        *Proxies      // nil when no fault of the run needs a proxy
	service        string        // "" for the home service, else the service's name
	addrs          []string
	servers        []Server // nil when lockbench did not spawn them
}

// Server is a spawned server a node fault can kill, restart and freeze: a redis-server of
// the target, or a member of another lock service.
type Server interface {
	Kill()
	Restart(ctx context.Context) error
	Pause() error
	Resume() error
}

// NewNodes describes the home service's target for node faults: its members
// (services.HasMembers) and what it is (Described); nil for none. proxies may be nil.
func NewNodes(home services.Conn, proxies *Proxies) *Nodes {
	n := &Nodes{home: home, proxies: proxies}
	if m, ok := home.(services.HasMembers); ok {
		addrs, servers := m.Members()
		n.addrs = addrs
		for _, srv := range servers {
			n.servers = append(n.servers, srv)
		}
	}
	if d, ok := home.(Described); ok {
		n.mode, n.topology = d.Target()
	}
	return n
}

// ServiceNodes describes the members of another lock service for node faults: addrs in
// the order node= counts them, servers their processes when lockbench spawned them (nil
// otherwise), proxies the proxies the service's clients connect through (nil when none
// does: then partition and latency do not apply).
func ServiceNodes(service string, addrs []string, servers []Server, proxies *Proxies) *Nodes {
	return &Nodes{service: service, addrs: addrs, servers: servers, proxies: proxies}
}

// owned reports whether lockbench controls the data nodes' processes.
func (n *Nodes) owned() bool { return n != nil && len(n.servers) > 0 }

// what names the nodes' service for messages: "the redlock target", "etcd".
func (n *Nodes) what() string {
	if n.service != "" {
		return n.service
	}
	return "the " + n.topology + " target"
}

// check reports whether the target can serve sp, of kind k, as a usage error naming what
// is missing: a target, the node its node field names, the proxy it works through, and
// whatever else k.check asks for.
func (n *Nodes) check(sp Spec, k *kind) error {
	bad := func(reason string) error { return &SpecError{Value: sp.Raw, Reason: reason} }
	if n == nil || (n.home == nil && n.service == "") {
		return bad("node faults need a target")
	}
	if n.service != "" && k.name == Failover {
		return bad(fmt.Sprintf("failover is Redis sentinel's; %s has no sentinel", n.service))
	}
	if n.service != "" && len(n.addrs) == 0 {
		return bad(n.service + " has no members a node fault can act on")
	}
	if _, ok := k.field(fieldNode.name); ok && sp.Node >= len(n.addrs) {
		return bad(fmt.Sprintf("node=%d, but %s has %d data node(s): 0..%d", sp.Node, n.what(), len(n.addrs), len(n.addrs)-1))
	}
	if k.proxy && n.proxies == nil {
		return bad("this fault needs a proxy in front of the node, set up before connecting")
	}
	if k.check != nil {
		if err := k.check(sp, n); err != nil {
			return bad(err.Error())
		}
	}
	return nil
}

// scene is one node fault playing in a phase: its spec, the nodes it acts on, and the
// window its times count from and its events are reported in.
type scene struct {
	Spec
	nodes       *Nodes
	windowStart time.Time
	emit        func(report.Event)
}

// say reports what the fault just did.
func (sc *scene) say(what string) {
	sc.emit(report.Event{TS: time.Since(sc.windowStart).Seconds(), Fault: sc.Raw, What: what})
}

// fail reports what stopped the fault.
func (sc *scene) fail(err error) { sc.say("failed: " + err.Error()) }

// at waits until time d of the window, and reports false if ctx ended first.
func (sc *scene) at(ctx context.Context, d time.Duration) bool {
	return clock.Sleep(ctx, time.Until(sc.windowStart.Add(d)))
}

// addr is the address of the spec's node; "" when the target has no such node.
func (sc *scene) addr() string {
	if sc.Node < len(sc.nodes.addrs) {
		return sc.nodes.addrs[sc.Node]
	}
	return ""
}

// clientFor returns a client talking to the data node at addr (NodeClients); nil when the
// target has none.
func (n *Nodes) clientFor(addr string) rueidis.Client {
	if c, ok := n.home.(NodeClients); ok {
		return c.NodeClient(addr)
	}
	return nil
}
