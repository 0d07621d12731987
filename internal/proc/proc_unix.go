//go:build unix

package proc

import (
	"errors"
	"os/exec"
	"syscall"
)

// Kill sends SIGKILL to pid; a process that is gone already is no error.
func Kill(pid int) error {
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	return nil
}

// sysProcAttr is cmd.SysProcAttr, created when nil, for Start and StartDetached to merge
// into.
func sysProcAttr(cmd *exec.Cmd) *syscall.SysProcAttr {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	return cmd.SysProcAttr
}
