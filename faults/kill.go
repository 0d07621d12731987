package faults

import (
	"context"
	"fmt"
	"time"

	"github.com/lockbench/lockbench/internal/clock"
)

// Kill: a spawned server dies, optionally back empty.
const Kill Kind = "kill"

var fieldRestart = durationField("restart", "D", func(s *Spec) *time.Duration { return &s.Restart })

func init() {
	register(kind{
		name:     Kill,
		order:    50,
		required: []field{fieldNode, fieldAt},
		optional: []field{fieldRestart},
		summary:  "a spawned node dies (SIGKILL) at time at; back after restart: a redis-server empty,\nanother service's member (etcd, ZooKeeper, PostgreSQL) on its data",
		check: func(_ Spec, n *Nodes) error {
			switch {
			case n.owned():
				return nil
			case n.service != "":
				return fmt.Errorf("kill needs servers lockbench spawned itself; this %s is external — drop --%s so lockbench spawns it", n.service, n.service)
			}
			return fmt.Errorf("kill needs servers lockbench spawned itself; this target is %s%s — drop --redis (and stop any `lockbench target up`) so lockbench spawns them", n.mode, targetUpHint(n.mode))
		},
		play: playKill,
	})
}

func targetUpHint(mode string) string {
	if mode == "spawned" {
		return " (started by `lockbench target up`, not by this run)"
	}
	return ""
}

// playKill kills the server with SIGKILL and restarts it: a redis-server without
// persistence, empty, its locks forgotten; another service's member on its data, as those
// services keep it on disk. With no restart the node stays dead until the phase's end.
func playKill(ctx context.Context, sc *scene) {
	if !sc.at(ctx, sc.At) {
		return
	}
	srv := sc.nodes.servers[sc.Node]
	srv.Kill()
	sc.say(fmt.Sprintf("node %d (%s) killed (SIGKILL)", sc.Node, sc.addr()))
	restarted := false
	if sc.Restart > 0 {
		restarted = clock.Sleep(ctx, sc.Restart)
	} else {
		<-ctx.Done() // no restart given: the node stays dead for the rest of the phase
	}
	if err := srv.Restart(context.Background()); err != nil {
		sc.fail(err)
		return
	}
	how := "empty"
	if sc.nodes.service != "" {
		how = "on its data"
	}
	if restarted && sc.nodes.service == "" {
		how += " (no persistence: its locks are forgotten)"
	} else if !restarted {
		how += " at the phase's end"
	}
	sc.say(fmt.Sprintf("node %d restarted %s", sc.Node, how))
}
