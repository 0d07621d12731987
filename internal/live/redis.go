package live

import (
	"context"
	"time"

	"github.com/lockbench/lockbench/services/redis"
)

// SampleRedis reads INFO on the servers nodes returns every interval until ctx ends, and
// hands add the commands the masters ran since the previous reading (total_commands_
// processed deltas, without these readings' own INFO). It runs beside the engine, not in
// it: a reading is one small INFO per server per second on the run's own clients, outside
// the measured path, and the phase's cost in the report (read at the window's edges) then
// includes these INFO commands, one per server per second — a negligible share of any
// lock load, and only with --metrics-addr.
//
// A reading that takes longer than the interval (a paused or cut-off server) is given up;
// the commands are counted at the next reading of that server that succeeds. A server
// that restarted between two readings is skipped for that interval: its counters started
// over.
func SampleRedis(ctx context.Context, nodes func() []redis.Node, interval time.Duration, add func(commands uint64)) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	prev := map[string]redis.ServerStats{}
	for {
		ns := nodes()
		rctx, cancel := context.WithTimeout(ctx, interval*9/10)
		stats, _ := redis.Snapshot(rctx, ns)
		cancel()
		next := map[string]redis.ServerStats{}
		var n uint64
		for i, s := range stats {
			if s.Addr == "" { // this reading failed: count from the last one that did not
				if p, ok := prev[ns[i].Addr]; ok {
					next[p.Addr] = p
				}
				continue
			}
			if s.Role != "master" {
				continue // a replica re-runs its master's commands
			}
			next[s.Addr] = s
			if p, ok := prev[s.Addr]; ok && p.RunID == s.RunID {
				n += redis.CostBetween([]redis.ServerStats{p}, []redis.ServerStats{s}).Commands
			}
		}
		prev = next
		if n > 0 {
			add(n)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
