//go:build !linux

package server

import "time"

// cpuTime: only Linux has /proc to read a process's CPU time from.
func cpuTime(int) (time.Duration, error) { return 0, ErrUnsupported }

// children: only Linux lists a process's children (from /proc); elsewhere the faults reach
// the server's own process only.
func children(int) []int { return nil }
