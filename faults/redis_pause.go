package faults

import (
	"context"
	"errors"
	"fmt"

	"github.com/lockbench/lockbench/internal/clock"
)

// RedisPause: a server stops answering.
const RedisPause Kind = "redis-pause"

func init() {
	register(kind{
		name:     RedisPause,
		order:    40,
		required: []field{fieldNode, fieldAt, fieldD},
		summary:  "node stops answering at time at, for d",
		check: func(_ Spec, n *Nodes) error {
			switch {
			case n.service != "" && !n.owned():
				return fmt.Errorf("redis-pause freezes a server lockbench spawned itself; this %s is external — drop --%s so lockbench spawns it", n.service, n.service)
			case n.mode == "embedded":
				return errors.New("the embedded server cannot be paused; install redis-server so lockbench spawns real servers")
			}
			return nil
		},
		play: playRedisPause,
	})
}

// playRedisPause freezes a server lockbench spawned with SIGSTOP; any other with CLIENT
// PAUSE, which the server lifts by itself after d.
func playRedisPause(ctx context.Context, sc *scene) {
	if !sc.at(ctx, sc.At) {
		return
	}
	n, addr := sc.nodes, sc.addr()
	if n.owned() {
		srv := n.servers[sc.Node]
		if err := srv.Pause(); err != nil {
			sc.fail(err)
			return
		}
		sc.say(fmt.Sprintf("node %d (%s) frozen (SIGSTOP) for %s", sc.Node, addr, sc.D))
		clock.Sleep(ctx, sc.D)
		if err := srv.Resume(); err != nil {
			sc.fail(err)
			return
		}
	} else {
		// Not our process: CLIENT PAUSE, which the server lifts by itself after D.
		c := n.clientFor(addr)
		if c == nil {
			sc.fail(fmt.Errorf("no client for %s", addr))
			return
		}
		if err := c.Do(ctx, c.B().ClientPause().Timeout(sc.D.Milliseconds()).All().Build()).Error(); err != nil {
			sc.fail(err)
			return
		}
		sc.say(fmt.Sprintf("node %d (%s) paused (CLIENT PAUSE ALL) for %s", sc.Node, addr, sc.D))
		clock.Sleep(ctx, sc.D)
	}
	sc.say(fmt.Sprintf("node %d answers again", sc.Node))
}
