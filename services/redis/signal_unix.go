//go:build unix

package redis

import (
	"os"
	"syscall"
)

// stopSignal and contSignal pause and resume a server (Server.Pause, Server.Resume).
var stopSignal, contSignal os.Signal = syscall.SIGSTOP, syscall.SIGCONT
