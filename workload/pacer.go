package workload

import (
	"math"
	"time"
)

// Pacer schedules open-loop arrivals, as vegeta's pacers do.
type Pacer interface {
	// Pace returns how long to wait before the next arrival, given the time elapsed since the
	// start and the arrivals so far. When the schedule is behind, wait is 0: late arrivals are
	// sent at once, never skipped, and their latency still counts from when they were due.
	Pace(elapsed time.Duration, hits uint64) (wait time.Duration)
	// Due is when arrival i (0-based) was meant to start, relative to the start.
	Due(i uint64) time.Duration
}

// ConstantPacer spaces arrivals evenly at Rate per second.
type ConstantPacer struct{ Rate float64 }

// Due is i/Rate seconds.
func (p ConstantPacer) Due(i uint64) time.Duration {
	return time.Duration(math.Round(float64(i) / p.Rate * float64(time.Second)))
}

// Pace waits until the next arrival is due.
func (p ConstantPacer) Pace(elapsed time.Duration, hits uint64) time.Duration {
	return max(p.Due(hits)-elapsed, 0)
}
