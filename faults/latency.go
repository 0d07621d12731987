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
		if err == nil && !(ms >= 0 && ms <= maxLatencyMS) {
			err = fmt.Errorf("ms must be from 0 to %d (%s)", maxLatencyMS, time.Duration(maxLatencyMS)*time.Millisecond)
		}
		s.MS = time.Duration(ms * float64(time.Millisecond))
		return err
	}}
	fieldJitter = field{name: "jitter", placeholder: "D", parse: func(s *Spec, v string) error {
		d, err := time.ParseDuration(v)
		if err == nil && !(d >= 0 && d <= maxLatencyMS*time.Millisecond) {
			err = fmt.Errorf("jitter must be from 0 to %s", time.Duration(maxLatencyMS)*time.Millisecond)
		}
		s.Jitter = d
		return err
	}}
)

// maxLatencyMS bounds latency's ms (and jitter): the end of a phase waits out the replies
// the proxy holds (a 5s latency made a 300ms run last 10s, one of 10 minutes never ended),
// and a node slower than 10s is down, which partition and redis-pause model.
const maxLatencyMS = 10_000

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
