package proc

import (
	"errors"
	"os"
	"os/exec"
)

// Windows spawns nothing: a server dying with lockbench, and pausing it, rest on Unix
// process control (a parent-death signal or a process group to kill, SIGSTOP and
// SIGCONT). Runs reach servers the user runs. So no state file records a process of
// lockbench's here: CommandLine finds none.

// CanSpawn reports whether this platform can spawn servers: ErrUnsupported here.
func CanSpawn() error { return ErrUnsupported }

// Start returns ErrUnsupported: see CanSpawn.
func Start(*exec.Cmd) error { return ErrUnsupported }

// StartDetached returns ErrUnsupported: see CanSpawn.
func StartDetached(*exec.Cmd) error { return ErrUnsupported }

// CommandLine returns ErrUnsupported: lockbench spawns nothing here.
func CommandLine(int) (string, error) { return "", ErrUnsupported }

// Owner returns ErrUnsupported: lockbench spawns nothing here.
func Owner(int) (int, error) { return 0, ErrUnsupported }

// ListensTCP returns ErrUnsupported: lockbench spawns nothing here.
func ListensTCP(int, int) (bool, error) { return false, ErrUnsupported }

// State is 'R' when a process pid can be opened, else 0.
func State(pid int) byte {
	p, err := os.FindProcess(pid)
	if err != nil {
		return 0
	}
	_ = p.Release()
	return 'R'
}

// Kill terminates pid; a process that is gone already is no error.
func Kill(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return nil // no such process
	}
	defer p.Release()
	if err := p.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	return nil
}
