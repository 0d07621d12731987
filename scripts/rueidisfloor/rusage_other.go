//go:build !unix

package main

import (
	"errors"
	"time"
)

// rusage: the floor reads its CPU with getrusage(2), which this system lacks.
func rusage() (time.Duration, error) {
	return 0, errors.New("the client's CPU time (getrusage) is not available on this system")
}
