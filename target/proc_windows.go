package target

import (
	"errors"
	"os"
	"os/exec"
)

// Windows spawns nothing: a server dying with lockbench, and pausing it, rest on Unix
// process control (a parent-death signal or a process group to kill, SIGSTOP and
// SIGCONT). Runs reach a server the user runs (--redis, --sentinel), or the embedded
// target when redis-server is not on PATH. So no state file records a process of
// lockbench's here: commandLine finds none, and every state file is stale.

func canSpawn() error { return ErrSpawnUnsupported }

func startProcess(*exec.Cmd, bool) error { return ErrSpawnUnsupported }

// stopSignal and contSignal are nil: Windows has no SIGSTOP or SIGCONT, so Server.Pause and
// Server.Resume return ErrPauseUnsupported.
var stopSignal, contSignal os.Signal

func commandLine(int) (string, error) { return "", ErrSpawnUnsupported }

// processState is 'R' when a process pid can be opened, else 0.
func processState(pid int) byte {
	p, err := os.FindProcess(pid)
	if err != nil {
		return 0
	}
	_ = p.Release()
	return 'R'
}

// killProcess terminates pid; a process that is gone already is no error.
func killProcess(pid int) error {
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
