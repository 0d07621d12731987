package faults

import (
	"context"
	"fmt"
	"strconv"
	"time"
)

// Latency: a proxy delays a node's traffic for the whole phase.
const Latency Kind = "latency"

var (
	// fieldMS is a number of milliseconds, fractions allowed: ms=2.5.
	fieldMS = field{name: "ms", placeholder: "M", parse: func(s *Spec, v string) error {
		ms, err := strconv.ParseFloat(v, 64)
		if err == nil && ms < 0 {
			err = fmt.Errorf("ms must be >= 0")
		}
		s.MS = time.Duration(ms * float64(time.Millisecond))
		return err
	}}
	fieldJitter = durationField("jitter", "D", func(s *Spec) *time.Duration { return &s.Jitter })
)

func init() {
	register(kind{
		name:     Latency,
		order:    70,
		required: []field{fieldNode, fieldMS},
		optional: []field{fieldJitter},
		summary:  "a proxy adds ms milliseconds (± jitter) to every reply of node",
		proxy:    true,
		play:     playLatency,
	})
}

// playLatency delays every reply of the node from the start, warm-up included, to the
// phase's end.
func playLatency(ctx context.Context, sc *scene) {
	addr := sc.addr()
	px, err := sc.nodes.proxies.lookup(addr)
	if err != nil {
		sc.fail(err)
		return
	}
	name := "latency-" + sc.Raw
	if err := addLatency(px, name, sc.MS.Milliseconds(), sc.Jitter.Milliseconds()); err != nil {
		sc.fail(err)
		return
	}
	sc.say(fmt.Sprintf("node %d (%s) replies %s later (± %s)", sc.Node, addr, sc.MS, sc.Jitter))
	<-ctx.Done()
	removeToxic(px, name)
}
