//go:build unix

package postgres

import "syscall"

// interrupt asks the postmaster for a fast shutdown.
var interrupt = syscall.SIGINT
