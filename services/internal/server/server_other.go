//go:build !linux

package server

import "time"

// cpuTime: only Linux has /proc to read a process's CPU time from.
func cpuTime(int) (time.Duration, error) { return 0, ErrUnsupported }
