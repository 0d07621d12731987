package faults

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/rueidis"

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

// check reports whether the target can serve sp, as a usage error naming what is missing.
func (n *Nodes) check(sp Spec) error {
	bad := func(reason string) error { return &SpecError{Value: sp.Raw, Reason: reason} }
	if n == nil || n.conn == nil {
		return bad("node faults need a target")
	}
	c := n.conn
	if sp.Kind != Failover && sp.Node >= len(c.Addrs) {
		return bad(fmt.Sprintf("node=%d, but the %s target has %d data node(s): 0..%d", sp.Node, c.Topology, len(c.Addrs), len(c.Addrs)-1))
	}
	switch sp.Kind {
	case Kill:
		if !n.owned() {
			return bad(fmt.Sprintf("kill needs servers lockbench spawned itself; this target is %s%s — drop --redis (and stop any `lockbench target up`) so lockbench spawns them", c.Mode, targetUpHint(c)))
		}
	case RedisPause:
		if c.Mode == "embedded" {
			return bad("the embedded server cannot be paused; install redis-server so lockbench spawns real servers")
		}
	case Failover:
		if c.Topology != "sentinel" || !n.owned() || c.ReplicationVia == "" || n.proxies == nil {
			return bad(fmt.Sprintf("failover needs the sentinel topology spawned by lockbench (--topology sentinel, no --redis); this target is %s %s", c.Mode, c.Topology))
		}
	case Latency, Partition:
		if n.proxies == nil {
			return bad("this fault needs a proxy in front of the node, set up before connecting")
		}
	}
	return nil
}

func targetUpHint(c *target.Conn) string {
	if c.Mode == "spawned" {
		return " (started by `lockbench target up`, not by this run)"
	}
	return ""
}

// play runs one node fault on its schedule and undoes it when ctx ends.
func (n *Nodes) play(ctx context.Context, sp Spec, windowStart time.Time, emit func(report.Event)) {
	say := func(what string) {
		emit(report.Event{TS: time.Since(windowStart).Seconds(), Fault: sp.Raw, What: what})
	}
	fail := func(err error) { say("failed: " + err.Error()) }
	at := func(d time.Duration) bool { return sleep(ctx, time.Until(windowStart.Add(d))) }
	addr := ""
	if sp.Node < len(n.conn.Addrs) {
		addr = n.conn.Addrs[sp.Node]
	}

	switch sp.Kind {
	case Latency:
		px, err := n.proxies.lookup(addr)
		if err != nil {
			fail(err)
			return
		}
		name := "latency-" + sp.Raw
		if err := addLatency(px, name, sp.MS.Milliseconds(), sp.Jitter.Milliseconds()); err != nil {
			fail(err)
			return
		}
		say(fmt.Sprintf("node %d (%s) replies %s later (± %s)", sp.Node, addr, sp.MS, sp.Jitter))
		<-ctx.Done()
		removeToxic(px, name)

	case Partition:
		px, err := n.proxies.lookup(addr)
		if err != nil {
			fail(err)
			return
		}
		if !at(sp.At) {
			return
		}
		cut(px)
		say(fmt.Sprintf("node %d (%s) cut off", sp.Node, addr))
		sleep(ctx, sp.D)
		if err := heal(px); err != nil {
			fail(err)
			return
		}
		say(fmt.Sprintf("node %d reachable again", sp.Node))

	case RedisPause:
		if !at(sp.At) {
			return
		}
		if n.owned() {
			srv := n.conn.Servers[sp.Node]
			if err := srv.Pause(); err != nil {
				fail(err)
				return
			}
			say(fmt.Sprintf("node %d (%s) frozen (SIGSTOP) for %s", sp.Node, addr, sp.D))
			sleep(ctx, sp.D)
			if err := srv.Resume(); err != nil {
				fail(err)
				return
			}
		} else {
			// Not our process: CLIENT PAUSE, which the server lifts by itself after D.
			c := n.clientFor(addr)
			if c == nil {
				fail(fmt.Errorf("no client for %s", addr))
				return
			}
			if err := c.Do(ctx, c.B().ClientPause().Timeout(sp.D.Milliseconds()).All().Build()).Error(); err != nil {
				fail(err)
				return
			}
			say(fmt.Sprintf("node %d (%s) paused (CLIENT PAUSE ALL) for %s", sp.Node, addr, sp.D))
			sleep(ctx, sp.D)
		}
		say(fmt.Sprintf("node %d answers again", sp.Node))

	case Kill:
		if !at(sp.At) {
			return
		}
		srv := n.conn.Servers[sp.Node]
		srv.Kill()
		say(fmt.Sprintf("node %d (%s) killed (SIGKILL)", sp.Node, addr))
		restarted := false
		if sp.Restart > 0 {
			restarted = sleep(ctx, sp.Restart)
		} else {
			<-ctx.Done() // no restart given: the node stays dead for the rest of the phase
		}
		if err := srv.Restart(context.Background()); err != nil {
			fail(err)
			return
		}
		if restarted {
			say(fmt.Sprintf("node %d restarted empty (no persistence: its locks are forgotten)", sp.Node))
		} else {
			say(fmt.Sprintf("node %d restarted empty at the phase's end", sp.Node))
		}

	case Failover:
		n.failover(ctx, sp, at, say, fail)
	}
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
