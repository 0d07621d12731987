package adapter

import (
	"context"
	"time"

	"github.com/lockbench/lockbench/workload"
)

// Reading is what a service's counters say at one moment, summed over its servers: when,
// the requests they counted, and their CPU time. A service's own reading embeds it, with
// what tells a restarted server (a start time, an uptime, a pid).
type Reading struct {
	At       time.Time
	Requests uint64
	CPU      time.Duration
}

// Spent is what the servers spent from r until after: changed when their request count
// went back (a server restarted and started counting over).
func (r Reading) Spent(after Reading, servers int, changed error) (workload.Cost, error) {
	if after.Requests < r.Requests {
		return workload.Cost{}, changed
	}
	return workload.Cost{
		Servers:  servers,
		Requests: after.Requests - r.Requests,
		CPUUS:    uint64(max(after.CPU-r.CPU, 0).Microseconds()),
		Elapsed:  after.At.Sub(r.At),
	}, nil
}

// StartCost is a workload.Scope's StartCost over a service's readings: read as the window
// opens and again as it closes, and spent says what the servers spent in between (or why
// the two readings cannot be subtracted).
func StartCost[R any](ctx context.Context, read func(context.Context) (R, error), spent func(before, after R) (workload.Cost, error)) (func(context.Context) (workload.Cost, error), error) {
	before, err := read(ctx)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context) (workload.Cost, error) {
		after, err := read(ctx)
		if err != nil {
			return workload.Cost{}, err
		}
		return spent(before, after)
	}, nil
}
