package server

import (
	"errors"
	"fmt"
	"os/exec"

	"github.com/lockbench/lockbench/internal/proc"
)

// The process control behind spawned servers (dying with lockbench, detached sessions,
// owner-recorded temporary directories) is internal/proc's, shared with the services.

// CanSpawn is nil where redis-server can be spawned, else ErrSpawnUnsupported (Windows).
func CanSpawn() error {
	if proc.CanSpawn() != nil {
		return ErrSpawnUnsupported
	}
	return nil
}

// startProcess starts a redis-server: a detached one in a session of its own
// (proc.StartDetached), any other so that it dies with lockbench (proc.Start).
func startProcess(cmd *exec.Cmd, detached bool) error {
	start := proc.Start
	if detached {
		start = proc.StartDetached
	}
	if err := start(cmd); err != nil {
		if errors.Is(err, proc.ErrUnsupported) {
			return ErrSpawnUnsupported
		}
		return err
	}
	return nil
}

// MakeTempDir creates a temporary directory lockbench-<name>-* owned by this process, for
// redis-server (see proc.TempDir).
func MakeTempDir(name string) (string, error) {
	dir, err := proc.TempDir(name)
	if err != nil {
		return "", fmt.Errorf("create a directory for redis-server: %w", err)
	}
	return dir, nil
}

func init() { proc.RegisterTempNames("redis") }
