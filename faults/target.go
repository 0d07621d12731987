package faults

import (
	"context"

	"github.com/redis/rueidis"

	"github.com/lockbench/lockbench/services"
)

// What a node fault asks of the home service's connection beyond a services.Conn: each an
// optional interface discovered by type assertion, as the session discovers
// services.HasMembers. Redis's connection (redis.Home) has them all; a target without one
// has its faults refused by their checks.

// Described is a target that says how it was reached (spawned, external, embedded) and
// its topology, for the faults' messages.
type Described interface {
	Target() (mode, topology string)
}

// NodeClients is a target whose data nodes a fault can talk to one by one (redis-pause's
// CLIENT PAUSE on a server lockbench did not spawn).
type NodeClients interface {
	// NodeClient is a client of the data node at addr; nil when there is none.
	NodeClient(addr string) rueidis.Client
}

// Failoverable is a target whose master can die and its replica be promoted: a sentinel
// topology lockbench spawned with the replication through a proxy.
type Failoverable interface {
	// FailoverMaster is the initial master, its address and the address its replica and
	// sentinels reach it through; ok is false when this target cannot fail over.
	FailoverMaster() (master services.Server, addr, via string, ok bool)
	// Master asks which address is the master now.
	Master(ctx context.Context) (string, error)
}
