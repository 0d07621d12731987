//go:build unix

package driver

import (
	"syscall"

	"github.com/lockbench/lockbench/internal/proc"
)

// kill kills the driver's process group (the driver and whatever it started), thawing it
// first so that nothing stays stopped.
func (p *process) kill() {
	p.in.Close()
	pid := p.cmd.Process.Pid
	if err := syscall.Kill(-pid, syscall.SIGKILL); err != nil {
		_ = proc.Kill(pid) // not a group leader (proc.Start's watchdog group off Linux)
	}
	_ = syscall.Kill(-pid, syscall.SIGCONT)
}

// stop and cont stop and resume the driver's process group.
func (p *process) stop() { p.signal(syscall.SIGSTOP) }
func (p *process) cont() { p.signal(syscall.SIGCONT) }

func (p *process) signal(sig syscall.Signal) {
	pid := p.cmd.Process.Pid
	if err := syscall.Kill(-pid, sig); err != nil {
		_ = syscall.Kill(pid, sig)
	}
}
