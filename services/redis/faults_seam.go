package redis

import (
	"context"

	"github.com/redis/rueidis"

	"github.com/lockbench/lockbench/services"
)

// What the node faults ask of Redis beyond a services.Conn, each an optional interface
// package faults discovers by type assertion: its data nodes (services.HasMembers), what
// it is (faults.Described), a client per node (faults.NodeClients) and, for a spawned
// sentinel topology, its failover (faults.Failoverable). The Flags take the failover's
// replication proxy (services.HasReplication).

var (
	_ services.HasMembers     = (*Home)(nil)
	_ services.HasReplication = (*Flags)(nil)
)

// Members are the data nodes in Addrs order, with their servers when lockbench spawned
// them for this run (Servers; none for external, embedded and `target up` targets).
func (h *Home) Members() (addrs []string, servers []services.Server) {
	for _, s := range h.Servers {
		servers = append(servers, s)
	}
	return h.Addrs, servers
}

// Target is how the target was reached (Mode: spawned, external, embedded) and its
// topology, for the node faults' messages.
func (h *Home) Target() (mode, topology string) { return h.Mode, h.Topology }

// NodeClient is a client talking to the data node at addr: a redlock master's own, a
// cluster node's, or the single server's; nil when none is.
func (h *Home) NodeClient(addr string) rueidis.Client {
	for i, a := range h.Addrs {
		if a == addr && i < len(h.Conn.Nodes) {
			return h.Conn.Nodes[i]
		}
	}
	for _, node := range Nodes(h.Client) {
		if node.Addr == addr {
			return node.Client
		}
	}
	if len(h.Addrs) == 1 {
		return h.Client
	}
	return nil
}

// FailoverMaster is, for a sentinel topology lockbench spawned with its replication
// through a proxy (Spec.ReplicationVia), the initial master, its address, and the address
// the replica and the sentinels reach it through; ok is false for any other target.
func (h *Home) FailoverMaster() (master services.Server, addr, via string, ok bool) {
	if h.Topology != Sentinel || len(h.Servers) == 0 || h.ReplicationVia == "" || len(h.SentinelAddrs) == 0 {
		return nil, "", "", false
	}
	return h.Servers[0], h.Servers[0].Addr, h.ReplicationVia, true
}

// Master asks the first sentinel which address is the master now.
func (h *Home) Master(ctx context.Context) (string, error) {
	return SentinelMaster(ctx, h.SentinelAddrs[0], h.MasterName)
}

// ReplicateVia makes Open spawn, for a failover, the sentinel topology whose replica
// reaches its initial master through via(master) (the failover fault's proxy).
func (f *Flags) ReplicateVia(via func(master string) (string, error)) { f.replication = via }
