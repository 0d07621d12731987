package proc

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// On Linux a spawned server dies with lockbench however lockbench ends, SIGKILL included:
// the kernel kills it when its parent goes (the parent-death signal). It runs in a process
// group of its own, so that a Ctrl-C in the shell reaches lockbench only, which then stops
// its servers itself.

// CanSpawn reports whether this platform can spawn servers: nil here.
func CanSpawn() error { return nil }

// Start starts cmd with the parent-death signal (SIGKILL), in a process group of its own,
// from the spawn thread. It merges into cmd.SysProcAttr: fields the caller set (Credential,
// to run a server as another user) are kept; Pdeathsig, Setpgid, Pgid and Setsid are
// Start's.
func Start(cmd *exec.Cmd) error {
	attr := sysProcAttr(cmd)
	attr.Pdeathsig = syscall.SIGKILL
	attr.Setsid, attr.Setpgid, attr.Pgid = false, true, 0
	return startOnSpawnThread(cmd)
}

// StartDetached starts cmd in a session of its own, without the parent-death signal: it
// outlives lockbench (`lockbench target up`), and a Ctrl-C in the shell does not reach it.
// It merges into cmd.SysProcAttr as Start does.
func StartDetached(cmd *exec.Cmd) error {
	attr := sysProcAttr(cmd)
	attr.Pdeathsig = 0
	attr.Setsid, attr.Setpgid, attr.Pgid = true, false, 0 // a session leader cannot setpgid
	return cmd.Start()
}

// The kernel sends the parent-death signal when the *thread* that started the child ends,
// not the process (go.dev/issue/27505). Go ends a thread when a goroutine locked to it
// exits, so a server started from an arbitrary goroutine could be killed mid-run. Every
// non-detached server is therefore started from one thread that is locked and never ends.
var spawnThread = sync.OnceValue(func() chan<- func() {
	ch := make(chan func())
	go func() {
		runtime.LockOSThread() // never unlocked: this thread lives as long as the process
		for f := range ch {
			f()
		}
	}()
	return ch
})

// startOnSpawnThread runs cmd.Start on the spawn thread.
func startOnSpawnThread(cmd *exec.Cmd) error {
	done := make(chan error, 1)
	spawnThread() <- func() { done <- cmd.Start() }
	return <-done
}

// CommandLine is pid's command line, /proc/<pid>/cmdline: its arguments NUL-separated (or
// the title a server rewrites it to, as redis-server does).
func CommandLine(pid int) (string, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return string(b), err
}

// State is the state letter of /proc/<pid>/stat (R, S, T, Z, ...), 0 when the process
// does not exist.
func State(pid int) byte {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// "pid (comm) S ...": comm may contain spaces and parentheses; the state follows the last ')'.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 || i+2 >= len(b) {
		return 0
	}
	return b[i+2]
}

// Owner is the uid pid runs as: the owner of /proc/<pid>.
func Owner(pid int) (int, error) {
	fi, err := os.Stat(fmt.Sprintf("/proc/%d", pid))
	if err != nil {
		return 0, err
	}
	return int(fi.Sys().(*syscall.Stat_t).Uid), nil
}

// ListensTCP reports whether pid holds a socket listening on TCP port (IPv4 or IPv6): a
// LISTEN entry of port in its network namespace's /proc/<pid>/net/tcp{,6} whose inode is
// one of its descriptors. Reading another user's descriptors needs root.
func ListensTCP(pid, port int) (bool, error) {
	inodes := map[string]bool{}
	for _, name := range []string{"tcp", "tcp6"} {
		if err := listenInodes(fmt.Sprintf("/proc/%d/net/%s", pid, name), port, inodes); err != nil {
			return false, err
		}
	}
	if len(inodes) == 0 {
		return false, nil
	}
	fdDir := fmt.Sprintf("/proc/%d/fd", pid)
	fds, err := os.ReadDir(fdDir)
	if err != nil {
		return false, err
	}
	for _, fd := range fds {
		link, err := os.Readlink(fdDir + "/" + fd.Name())
		if err != nil {
			continue // closed since ReadDir
		}
		if ino, ok := strings.CutPrefix(link, "socket:["); ok && inodes[strings.TrimSuffix(ino, "]")] {
			return true, nil
		}
	}
	return false, nil
}

// listenInodes adds to inodes those of the LISTEN sockets on port in a /proc/net/tcp
// table ("sl local_address rem_address st ... inode": address hex IP:PORT, st 0A = LISTEN).
func listenInodes(table string, port int, inodes map[string]bool) error {
	f, err := os.Open(table)
	if os.IsNotExist(err) && strings.HasSuffix(table, "6") {
		return nil // no IPv6 in this kernel
	}
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Scan() // header
	for sc.Scan() {
		cols := strings.Fields(sc.Text())
		if len(cols) < 10 || cols[3] != "0A" {
			continue
		}
		_, hexPort, _ := strings.Cut(cols[1], ":")
		if p, err := strconv.ParseUint(hexPort, 16, 16); err == nil && int(p) == port {
			inodes[cols[9]] = true
		}
	}
	return sc.Err()
}
