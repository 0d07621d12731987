package faults

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/rueidis"

	"github.com/lockbench/lockbench/internal/clock"
	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/target"
)

// Nodes is what node faults act on: the connected target — its data nodes in the order of
// target.Conn.Addrs, the processes when lockbench spawned them — and the proxies in front
// of them when a fault needs one.
type Nodes struct {
	conn    *target.Conn
	proxies *Proxies // nil when no fault of the run needs a proxy
}

// NewNodes describes conn for node faults; proxies may be nil.
func NewNodes(conn *target.Conn, proxies *Proxies) *Nodes {
	return &Nodes{conn: conn, proxies: proxies}
}

// owned reports whether lockbench controls the data nodes' processes.
func (n *Nodes) owned() bool { return n != nil && n.conn != nil && len(n.conn.Servers) > 0 }

// check reports whether the target can serve sp, of kind k, as a usage error naming what
// is missing: a target, the node its node field names, the proxy it works through, and
// whatever else k.check asks for.
func (n *Nodes) check(sp Spec, k *kind) error {
	bad := func(reason string) error { return &SpecError{Value: sp.Raw, Reason: reason} }
	if n == nil || n.conn == nil {
		return bad("node faults need a target")
	}
	c := n.conn
	if _, ok := k.field(fieldNode.name); ok && sp.Node >= len(c.Addrs) {
		return bad(fmt.Sprintf("node=%d, but the %s target has %d data node(s): 0..%d", sp.Node, c.Topology, len(c.Addrs), len(c.Addrs)-1))
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
	if sc.Node < len(sc.nodes.conn.Addrs) {
		return sc.nodes.conn.Addrs[sc.Node]
	}
	return ""
}

// clientFor returns a client talking to the data node at addr.
func (n *Nodes) clientFor(addr string) rueidis.Client {
	for i, a := range n.conn.Addrs {
		if a == addr && i < len(n.conn.Nodes) {
			return n.conn.Nodes[i]
		}
	}
	for _, node := range target.Nodes(n.conn.Client) {
		if node.Addr == addr {
			return node.Client
		}
	}
	if len(n.conn.Addrs) == 1 {
		return n.conn.Client
	}
	return nil
}
