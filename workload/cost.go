package workload

import (
	"context"
	"strings"
	"time"

	"github.com/redis/rueidis"

	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/target"
)

// fillCost divides the window's INFO deltas, over the masters only (a replica re-runs what
// its master ran), by the acquisitions.
func (p *phase) fillCost(r *report.Result, before, after []target.ServerStats) {
	var b, a []target.ServerStats
	for i := range min(len(before), len(after)) {
		if before[i].Role == "master" {
			b, a = append(b, before[i]), append(a, after[i])
		}
	}
	c := target.CostBetween(b, a)
	r.Redis = report.RedisCost{
		Commands: c.Commands, CPUUS: c.CPUUS, NetInBytes: c.NetIn, NetOutBytes: c.NetOut,
		Measured: len(b) > 0,
	}
	if c.Elapsed > 0 {
		r.Redis.CPUPercent = float64(c.CPUUS) / float64(c.Elapsed.Microseconds()) * 100
	}
	if n := float64(r.Acquired); n > 0 {
		r.Redis.CommandsPerAcquire = float64(c.Commands) / n
		r.Redis.CPUUSPerAcquire = float64(c.CPUUS) / n
		r.Redis.BytesPerAcquire = float64(c.NetIn+c.NetOut) / n
	}
}

// stuckKeys counts the phase's lock keys still in Redis without a ttl once every worker
// released what it held: nothing will ever remove them (seed 003's deadlock). Derived keys
// (fence counters, queues) are not locks and are not counted.
func (p *phase) stuckKeys() uint64 {
	if !p.info.KeyTTL {
		return 0 // its locks never carry a ttl by design (getset): not stuck, stale by timestamp
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var n uint64
	for _, node := range p.nodes {
		_ = scanPrefix(ctx, node.Client, p.prefix, func(keys []string) {
			for _, k := range keys {
				if !p.isLockKey(k) {
					continue
				}
				if ttl, err := node.Client.Do(ctx, node.Client.B().Pttl().Key(k).Build()).AsInt64(); err == nil && ttl == -1 {
					n++
				}
			}
		})
	}
	return n
}

// isLockKey reports whether k is one of the phase's lock keys: prefix + "{i}" exactly.
func (p *phase) isLockKey(k string) bool {
	rest, ok := strings.CutPrefix(k, p.prefix)
	return ok && len(rest) > 2 && rest[0] == '{' && rest[len(rest)-1] == '}' && !strings.ContainsAny(rest[1:len(rest)-1], "{}:")
}

// cleanup deletes the phase's keys (locks left behind, fence counters, queues), bounded in
// time: a benchmark must not leave garbage in someone's Redis.
func (p *phase) cleanup() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, n := range p.nodes {
		_ = scanPrefix(ctx, n.Client, p.prefix, func(keys []string) {
			for _, k := range keys { // one by one: in a cluster the keys live in many slots
				n.Client.Do(ctx, n.Client.B().Unlink().Key(k).Build())
			}
		})
	}
}

// scanPrefix calls fn with batches of the keys starting with prefix on one server.
func scanPrefix(ctx context.Context, c rueidis.Client, prefix string, fn func([]string)) error {
	var cursor uint64
	for {
		e, err := c.Do(ctx, c.B().Scan().Cursor(cursor).Match(prefix+"*").Count(1000).Build()).AsScanEntry()
		if err != nil {
			return err
		}
		if len(e.Elements) > 0 {
			fn(e.Elements)
		}
		if cursor = e.Cursor; cursor == 0 {
			return nil
		}
	}
}
