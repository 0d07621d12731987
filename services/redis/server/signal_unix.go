//go:build unix

package server

import (
	"os"
	"syscall"
)

// stopSignal and contSignal pause and resume a server (Server.Pause, Server.Resume).
var stopSignal, contSignal os.Signal = syscall.SIGSTOP, syscall.SIGCONT
