package faults

import (
	"context"
	"fmt"

	"github.com/lockbench/lockbench/internal/clock"
)

// Partition: a proxy cuts a node off for a while.
const Partition Kind = "partition"

func init() {
	register(kind{
		name:     Partition,
		order:    80,
		required: []field{fieldNode, fieldAt, fieldD},
		summary:  "a proxy cuts node off at time at, for d",
		proxy:    true,
		play:     playPartition,
	})
}

// playPartition stops the node's proxy: its connections close and new ones are refused, as
// if the node's host dropped off the network, until the proxy starts again after d.
func playPartition(ctx context.Context, sc *scene) {
	addr := sc.addr()
	px, err := sc.nodes.proxies.lookup(addr)
	if err != nil {
		sc.fail(err)
		return
	}
	if !sc.at(ctx, sc.At) {
		return
	}
	cut(px)
	sc.say(fmt.Sprintf("node %d (%s) cut off", sc.Node, addr))
	clock.Sleep(ctx, sc.D)
	if err := heal(px); err != nil {
		sc.fail(err)
		return
	}
	sc.say(fmt.Sprintf("node %d reachable again", sc.Node))
}
