//go:build unix

package target

import (
	"errors"
	"os"
	"syscall"
)

// stopSignal and contSignal pause and resume a server (Server.Pause, Server.Resume).
var stopSignal, contSignal os.Signal = syscall.SIGSTOP, syscall.SIGCONT

// killProcess sends SIGKILL to pid; a process that is gone already is no error.
func killProcess(pid int) error {
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	return nil
}
