package faults

import (
	"context"
	"fmt"
	"time"

	"github.com/lockbench/lockbench/internal/clock"
)

// Failover: sentinel: the master dies, its lagging replica takes over.
const Failover Kind = "failover"

var fieldLag = durationField("lag", "D", func(s *Spec) *time.Duration { return &s.Lag })

func init() {
	register(kind{
		name:     Failover,
		order:    60,
		required: []field{fieldAt},
		optional: []field{fieldLag},
		summary:  "sentinel topology: the master dies at time at; its replica, lagging by lag, is promoted",
		check: func(_ Spec, n *Nodes) error {
			if _, ok := n.failover(); !ok || !n.owned() || n.proxies == nil {
				return fmt.Errorf("failover needs the sentinel topology spawned by lockbench (--topology sentinel, no --redis); this target is %s %s", n.mode, n.topology)
			}
			return nil
		},
		play: playFailover,
	})
}

// playFailover plays seed 002's §6 scenario on a spawned sentinel topology: the replica
// receives replication through a proxy that delays it by the lag; at the fault's time the
// master is killed and its replication link cut, so every lock it granted within the lag
// is lost; the sentinels promote the replica and lockbench's clients follow them to it.
// When the phase ends the old master comes back, empty, and the sentinels make it a
// replica of the new one. One failover per run: afterwards the initial master is no longer
// the master.
func playFailover(ctx context.Context, sc *scene) {
	n := sc.nodes
	f, _ := n.failover() // its check made sure
	master, masterAddr, via, _ := f.FailoverMaster()
	px, err := n.proxies.replicationOf(masterAddr)
	if err != nil {
		sc.fail(err)
		return
	}
	const lagToxic = "replication-lag"
	if sc.Lag > 0 {
		if err := addLatency(px, lagToxic, sc.Lag.Milliseconds(), 0); err != nil {
			sc.fail(err)
			return
		}
		sc.say(fmt.Sprintf("replication to the replica lags by %s", sc.Lag))
	}
	defer removeToxic(px, lagToxic)
	if !sc.at(ctx, sc.At) {
		return
	}
	master.Kill()
	cut(px) // what is still in flight to the replica dies with the link
	sc.say(fmt.Sprintf("master %s killed (SIGKILL); its replication link cut, losing what had not reached the replica", masterAddr))

	promoted := make(chan string, 1)
	go func() {
		for ctx.Err() == nil {
			addr, err := f.Master(ctx)
			if err == nil && addr != via && addr != masterAddr {
				promoted <- addr
				return
			}
			clock.Sleep(ctx, 100*time.Millisecond)
		}
	}()
	killed := time.Now()
	select {
	case addr := <-promoted:
		sc.say(fmt.Sprintf("sentinels promoted %s after %.1fs; clients follow", addr, time.Since(killed).Seconds()))
	case <-ctx.Done():
	}
	<-ctx.Done()
	if err := master.Restart(context.Background()); err != nil {
		sc.fail(err)
		return
	}
	if err := heal(px); err != nil {
		sc.fail(err)
		return
	}
	sc.say(fmt.Sprintf("old master %s back, empty; the sentinels make it a replica", masterAddr))
}

// failover is the target's failover (Failoverable), when it can fail over.
func (n *Nodes) failover() (Failoverable, bool) {
	f, ok := n.home.(Failoverable)
	if !ok {
		return nil, false
	}
	_, _, _, can := f.FailoverMaster()
	return f, can
}
