package server

import (
	"errors"
	"os"
	"os/exec"
)

// Windows spawns nothing (proc.Start returns ErrUnsupported): runs reach a server the user
// runs (--etcd, --zookeeper, --postgres).

func asUser(*exec.Cmd, string) error { return nil }

// Chown is a no-op on Windows.
func Chown(string, string) error { return nil }

func resume(*os.Process) {}

func kill(p *os.Process) { _ = p.Kill() }

// Pause and Resume are not supported on Windows.
func (p *Process) Pause() error  { return errors.New("pause: " + ErrUnsupported.Error()) }
func (p *Process) Resume() error { return errors.New("resume: " + ErrUnsupported.Error()) }
