//go:build unix && !linux

package proc

import (
	"os/exec"
	"syscall"
	"time"
)

// Without a parent-death signal (macOS, the BSDs) a spawned server is stopped by Stop only:
// a lockbench killed with SIGKILL leaves it running. Its own process group keeps a Ctrl-C
// in the shell from reaching it.
func start(cmd *exec.Cmd) error {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	return cmd.Start()
}

func cpuTime(int) (time.Duration, error) { return 0, ErrUnsupported }
