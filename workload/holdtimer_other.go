//go:build !linux

package workload

// defaultWindow is the spin before a deadline until the sleeper's lateness is known: a Go
// timer's wake-ups can be a millisecond late, more than maxWindow.
const defaultWindow = maxWindow

func newSleeper() sleeper { return newTimerSleeper() }
