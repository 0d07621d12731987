//go:build !linux

package workload

import "time"

// defaultWindow is the spin before a deadline until the sleeper's lateness is known.
const defaultWindow = 1500 * time.Microsecond

func newSleeper() sleeper { return newTimerSleeper() }
