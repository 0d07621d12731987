package target

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// Spawned servers die with lockbench even when it is killed (see Server), but a
// killed process cannot remove its temporary directory. Each such directory therefore
// records its owner's pid, and the next lockbench process that spawns anything removes the
// directories whose owner is gone.

// ownerFile holds the pid of the process whose servers use the directory.
const ownerFile = "lockbench.pid"

// tempPrefixes start the names of the temporary directories spawn and StartServer create;
// `target up` directories (statePrefix) are not among them: they belong to `target down`.
var tempPrefixes = []string{"lockbench-redis-", "lockbench-single-", "lockbench-redlock-", "lockbench-sentinel-", "lockbench-cluster-"}

// makeTempDir creates a temporary directory named prefix* owned by this process.
func makeTempDir(prefix string) (string, error) {
	sweepOnce()
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		return "", fmt.Errorf("create a directory for redis-server: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(strconv.Itoa(os.Getpid())), 0o600); err != nil {
		_ = os.RemoveAll(dir)
		return "", fmt.Errorf("create a directory for redis-server: %w", err)
	}
	return dir, nil
}

// sweepOnce removes, once per process, the temporary directories of killed lockbench
// processes.
var sweepOnce = sync.OnceFunc(func() { sweepTempDirs(os.TempDir()) })

func sweepTempDirs(root string) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.IsDir() || !hasTempPrefix(e.Name()) {
			continue
		}
		dir := filepath.Join(root, e.Name())
		b, err := os.ReadFile(filepath.Join(dir, ownerFile))
		if errors.Is(err, fs.ErrNotExist) {
			continue // not ours, or its owner is writing the file right now
		}
		pid, perr := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || perr != nil || pid <= 0 {
			continue
		}
		if s := processState(pid); s == 0 || s == 'Z' {
			_ = os.RemoveAll(dir)
		}
	}
}

func hasTempPrefix(name string) bool {
	for _, p := range tempPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}
