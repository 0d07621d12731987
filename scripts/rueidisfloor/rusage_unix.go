//go:build unix

package main

import (
	"syscall"
	"time"
)

// rusage is this process's user + system CPU so far.
func rusage() (time.Duration, error) {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		return 0, err
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano()), nil
}
