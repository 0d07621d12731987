package proc

import (
	"errors"
	"os"
	"os/exec"
	"time"
)

// Windows spawns nothing: runs reach a server the user runs (--etcd, --zookeeper,
// --postgres).
func start(*exec.Cmd) error { return ErrUnsupported }

func asUser(*exec.Cmd, string) error { return nil }

// Chown is a no-op on Windows.
func Chown(string, string) error { return nil }

func resume(*os.Process) {}

func cpuTime(int) (time.Duration, error) { return 0, ErrUnsupported }

// Pause and Resume are not supported on Windows.
func (p *Process) Pause() error  { return errors.New("pause: " + ErrUnsupported.Error()) }
func (p *Process) Resume() error { return errors.New("resume: " + ErrUnsupported.Error()) }

// processAlive: Windows spawns nothing, so it has no directories to sweep.
func processAlive(int) bool { return true }
