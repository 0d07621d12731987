//go:build unix && !linux

package proc

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// macOS and the BSDs have no parent-death signal. A watchdog process makes the spawned
// servers die with lockbench instead: a shell that leads a process group of its own and
// blocks reading a pipe whose only write end lockbench holds. Every server Start starts
// joins that group. However lockbench ends, SIGKILL included, the kernel closes the write
// end as the process goes; the read returns and the shell kills its group: the servers,
// then itself. It ignores SIGHUP and SIGINT, which a terminal sends to a group (a group
// whose parent has gone gets SIGHUP when a member is stopped, as a paused server is).
// Being outside the shell's foreground group also keeps a Ctrl-C from reaching the
// servers, as on Linux. The shell runs as lockbench's user, so it can kill a server that
// runs as another (Credential: PostgreSQL as its system user when lockbench is root).
//
// One watchdog serves every server of a process. Should it die while lockbench runs
// (someone killed it), the next start runs a new one; the servers already started are
// then stopped by their owner's Stop or Close only, and a SIGKILLed lockbench would leave
// them running.

// CanSpawn reports whether this platform can spawn servers: nil here.
func CanSpawn() error { return nil }

// watchdogScript waits for the end of its standard input, then kills its process group.
const watchdogScript = `trap '' HUP INT; read -r _; kill -KILL 0`

var watchdog struct {
	sync.Mutex
	pgid int           // the watchdog's pid, and so its process group
	done chan struct{} // closed when the watchdog has exited; nil = never started
	w    *os.File      // the pipe's write end: never written, closed by lockbench's exit
}

// watchdogGroup returns the process group of a running watchdog, starting one if there is
// none.
func watchdogGroup() (int, error) {
	watchdog.Lock()
	defer watchdog.Unlock()
	if watchdog.done != nil {
		select {
		case <-watchdog.done:
		default:
			return watchdog.pgid, nil
		}
	}
	r, w, err := os.Pipe() // close-on-exec: no other child inherits w
	if err != nil {
		return 0, fmt.Errorf("start the watchdog: %w", err)
	}
	defer r.Close()
	cmd := exec.Command("/bin/sh", "-c", watchdogScript)
	cmd.Stdin = r
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		w.Close()
		return 0, fmt.Errorf("start the watchdog: %w", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	if watchdog.w != nil {
		watchdog.w.Close() // its watchdog is gone
	}
	watchdog.pgid, watchdog.done, watchdog.w = cmd.Process.Pid, done, w
	return watchdog.pgid, nil
}

// Start starts cmd in the watchdog's process group. It merges into cmd.SysProcAttr:
// fields the caller set (Credential, to run a server as another user) are kept; Setsid,
// Setpgid and Pgid are Start's.
func Start(cmd *exec.Cmd) error {
	pgid, err := watchdogGroup()
	if err != nil {
		return err
	}
	attr := sysProcAttr(cmd)
	attr.Setsid, attr.Setpgid, attr.Pgid = false, true, pgid
	return cmd.Start()
}

// StartDetached starts cmd in a session of its own, outside the watchdog's group: it
// outlives lockbench (`lockbench target up`), and a Ctrl-C in the shell does not reach it.
// It merges into cmd.SysProcAttr as Start does.
func StartDetached(cmd *exec.Cmd) error {
	attr := sysProcAttr(cmd)
	attr.Setsid, attr.Setpgid, attr.Pgid = true, false, 0 // a session leader cannot setpgid
	return cmd.Start()
}

// CommandLine is pid's command line as ps shows it (redis-server rewrites it to
// "redis-server 127.0.0.1:PORT").
func CommandLine(pid int) (string, error) {
	state, line, err := ps(pid)
	if err == nil && state == 0 {
		err = fmt.Errorf("no process %d", pid)
	}
	return line, err
}

// State is pid's state letter as ps shows it (R, S, T, Z, ...), 0 when the process does
// not exist, and '?' when ps fails: unknown, so a directory of a live owner is never
// swept.
func State(pid int) byte {
	state, _, err := ps(pid)
	if err != nil {
		return '?'
	}
	return state
}

// ps reports pid's state letter and command line; state 0 means no such process.
func ps(pid int) (state byte, line string, err error) {
	out, err := exec.Command("ps", "-ww", "-o", "stat=", "-o", "command=", "-p", strconv.Itoa(pid)).Output()
	var exit *exec.ExitError
	switch text := strings.TrimSpace(string(out)); {
	case err == nil && text != "":
		stat, line, _ := strings.Cut(text, " ")
		return stat[0], strings.TrimSpace(line), nil
	case err == nil, errors.As(err, &exit) && text == "":
		return 0, "", nil // ps lists nothing, and exits 1, for a pid that does not exist
	}
	return 0, "", fmt.Errorf("ps -p %d: %w", pid, err)
}

// Owner is the uid pid runs as, as ps shows it.
func Owner(pid int) (int, error) {
	out, err := exec.Command("ps", "-o", "uid=", "-p", strconv.Itoa(pid)).Output()
	text := strings.TrimSpace(string(out))
	if err != nil || text == "" {
		return 0, fmt.Errorf("ps -o uid -p %d: no such process (%v)", pid, err)
	}
	return strconv.Atoi(text)
}

// ListensTCP reports whether pid holds a socket listening on TCP port, as lsof sees it
// (macOS ships lsof; a BSD without it gets an error, and lockbench then kills nothing).
func ListensTCP(pid, port int) (bool, error) {
	out, err := exec.Command("lsof", "-nP", "-a", "-p", strconv.Itoa(pid),
		fmt.Sprintf("-iTCP:%d", port), "-sTCP:LISTEN", "-t").Output()
	var exit *exec.ExitError
	switch text := strings.TrimSpace(string(out)); {
	case err == nil:
		return text == strconv.Itoa(pid), nil
	case errors.As(err, &exit) && text == "":
		return false, nil // lsof lists nothing, and exits 1, when no socket matches
	}
	return false, fmt.Errorf("lsof -p %d -iTCP:%d: %w", pid, port, err)
}
