package faults

import (
	"context"
	"fmt"
	"time"

	"github.com/lockbench/lockbench/target"
)

// failover plays seed 002's §6 scenario on a spawned sentinel topology: the replica
// receives replication through a proxy that delays it by the lag; at the fault's time the
// master is killed and its replication link cut, so every lock it granted within the lag
// is lost; the sentinels promote the replica and lockbench's clients follow them to it.
// When the phase ends the old master comes back, empty, and the sentinels make it a
// replica of the new one. One failover per run: afterwards the initial master is no longer
// the master.
func (n *Nodes) failover(ctx context.Context, sp Spec, at func(time.Duration) bool, say func(string), fail func(error)) {
	master := n.conn.Servers[0]
	px, err := n.proxies.replicationOf(master.Addr)
	if err != nil {
		fail(err)
		return
	}
	const lagToxic = "replication-lag"
	if sp.Lag > 0 {
		if err := addLatency(px, lagToxic, sp.Lag.Milliseconds(), 0); err != nil {
			fail(err)
			return
		}
		say(fmt.Sprintf("replication to the replica lags by %s", sp.Lag))
	}
	defer removeToxic(px, lagToxic)
	if !at(sp.At) {
		return
	}
	master.Kill()
	cut(px) // what is still in flight to the replica dies with the link
	say(fmt.Sprintf("master %s killed (SIGKILL); its replication link cut, losing what had not reached the replica", master.Addr))

	promoted := make(chan string, 1)
	go func() {
		for ctx.Err() == nil {
			addr, err := target.SentinelMaster(ctx, n.conn.SentinelAddrs[0], n.conn.MasterName)
			if err == nil && addr != n.conn.ReplicationVia && addr != master.Addr {
				promoted <- addr
				return
			}
			sleep(ctx, 100*time.Millisecond)
		}
	}()
	killed := time.Now()
	select {
	case addr := <-promoted:
		say(fmt.Sprintf("sentinels promoted %s after %.1fs; clients follow", addr, time.Since(killed).Seconds()))
	case <-ctx.Done():
	}
	<-ctx.Done()
	if err := master.Restart(context.Background()); err != nil {
		fail(err)
		return
	}
	if err := heal(px); err != nil {
		fail(err)
		return
	}
	say(fmt.Sprintf("old master %s back, empty; the sentinels make it a replica", master.Addr))
}
