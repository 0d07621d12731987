//go:build unix

package server

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"strconv"
	"syscall"
)

// asUser makes cmd run as the system user name when lockbench runs as root; as anyone
// else it runs as that user (who cannot switch).
func asUser(cmd *exec.Cmd, name string) error {
	if os.Geteuid() != 0 {
		return nil
	}
	u, err := user.Lookup(name)
	if err != nil {
		return fmt.Errorf("running as root, the server needs the system user %q: %w", name, err)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err1 != nil || err2 != nil {
		return fmt.Errorf("user %q has a non-numeric uid or gid", name)
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	return nil
}

// Chown gives path to the system user name when lockbench runs as root (a no-op otherwise).
func Chown(path, name string) error {
	if os.Geteuid() != 0 {
		return nil
	}
	u, err := user.Lookup(name)
	if err != nil {
		return fmt.Errorf("running as root, the server needs the system user %q: %w", name, err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return os.Chown(path, uid, gid)
}

// signalAll sends sig to the server, then to the processes it forked: PostgreSQL's
// backends run the sessions, not the postmaster, and make themselves group leaders, so
// neither the postmaster's signal nor its group's reaches them.
//
// The children are listed before the server is signalled: once it dies they are init's,
// and no longer found by their parent.
func signalAll(p *os.Process, sig syscall.Signal) error {
	kids := children(p.Pid)
	err := p.Signal(sig)
	for _, child := range kids {
		_ = syscall.Kill(child, sig)
	}
	return err
}

func resume(p *os.Process) { _ = signalAll(p, syscall.SIGCONT) }

func kill(p *os.Process) { _ = signalAll(p, syscall.SIGKILL) }

// Pause freezes the server and its children (SIGSTOP), Resume thaws them.
func (p *Process) Pause() error  { return signalAll(p.current().cmd.Process, syscall.SIGSTOP) }
func (p *Process) Resume() error { return signalAll(p.current().cmd.Process, syscall.SIGCONT) }
