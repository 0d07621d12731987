// Package proc holds the operating-system side of the servers lockbench spawns, shared by
// target (redis-server) and the services (etcd, ZooKeeper, PostgreSQL): starting a child
// that dies with lockbench however lockbench ends (Start), or one that outlives it
// (StartDetached, for `lockbench target up`); reading a process's state and command line;
// temporary directories that record their owner, swept once the owner is gone (TempDir);
// and free loopback ports (FreePort).
package proc

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// ErrUnsupported is returned where the platform cannot spawn servers (Windows) or lacks
// what an operation needs.
var ErrUnsupported = errors.New("not supported on this platform")

// FreePort is a TCP port free on 127.0.0.1 right now.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// FreePorts returns n distinct free ports on 127.0.0.1: each is held until all are chosen,
// so that two calls of FreePort in a row cannot hand out the same port twice (the kernel
// may give a port just released to the next bind).
func FreePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// Spawned servers die with lockbench even when it is killed (see Start), but a killed
// process cannot remove its temporary directory. Each such directory therefore records its
// owner's pid, and the next lockbench process that makes one (TempDir) removes the
// directories whose owner is gone.

// ownerFile holds the pid of the process whose servers use the directory.
const ownerFile = "lockbench.pid"

// tempNames are the names TempDir accepts: a directory lockbench-<name>-* is swept once its
// owner is gone. Each lock service package registers its own in init (RegisterTempNames):
// services/redis lockbench-redis-* and one per topology (single, redlock, sentinel,
// cluster), the other services one per server. `lockbench target up` directories
// (lockbench-target-*) are deliberately not among them: they outlive the process that made
// them and belong to `lockbench target down`.
var (
	tempNamesMu sync.Mutex
	tempNames   []string
)

// RegisterTempNames adds names to those TempDir accepts and Sweep removes; a service package
// calls it in init, before any directory is made.
func RegisterTempNames(names ...string) {
	tempNamesMu.Lock()
	defer tempNamesMu.Unlock()
	for _, n := range names {
		if !slices.Contains(tempNames, n) {
			tempNames = append(tempNames, n)
		}
	}
}

// names are the registered temp names.
func names() []string {
	tempNamesMu.Lock()
	defer tempNamesMu.Unlock()
	return slices.Clone(tempNames)
}

// TempDir makes a temporary directory named lockbench-<name>-*, owned by this process: it
// records this process's pid in it. Before its first directory, a process removes those of
// killed lockbench processes (Sweep). name must be one of the swept names (tempNames), so
// that a directory never outlives a killed owner. The error is not wrapped: callers say
// what the directory is for.
func TempDir(name string) (string, error) {
	if !isTempName(name) {
		return "", fmt.Errorf("internal error: proc.TempDir(%q): not a swept name", name)
	}
	sweepOnce()
	dir, err := os.MkdirTemp("", tempPrefix(name))
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(strconv.Itoa(os.Getpid())), 0o600); err != nil {
		_ = os.RemoveAll(dir)
		return "", err
	}
	return dir, nil
}

func tempPrefix(name string) string { return "lockbench-" + name + "-" }

func isTempName(name string) bool {
	return slices.Contains(names(), name)
}

// hasTempPrefix reports whether a directory named name is one TempDir makes.
func hasTempPrefix(name string) bool {
	for _, n := range names() {
		if strings.HasPrefix(name, tempPrefix(n)) {
			return true
		}
	}
	return false
}

// sweepOnce removes, once per process, the temporary directories of killed lockbench
// processes.
var sweepOnce = sync.OnceFunc(func() { Sweep(os.TempDir()) })

// Sweep removes the directories under root that TempDir made for a process that is gone
// (no such process, or a zombie). A directory without an owner file is left alone: not
// ours, or its owner is writing the file right now. So is one whose owner's state is
// unknown.
func Sweep(root string) {
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
		if s := State(pid); s == 0 || s == 'Z' {
			_ = os.RemoveAll(dir)
		}
	}
}
