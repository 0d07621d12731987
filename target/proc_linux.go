package target

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"syscall"
)

// On Linux a spawned server dies with lockbench however lockbench ends, SIGKILL included:
// the kernel kills it when its parent goes (the parent-death signal). It runs in a process
// group of its own, so that a Ctrl-C in the shell reaches lockbench only, which then stops
// its servers itself.

func canSpawn() error { return nil }

// startProcess starts a redis-server: a detached one in a session of its own, any other
// with the parent-death signal, from the spawn thread.
func startProcess(cmd *exec.Cmd, detached bool) error {
	if detached {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		return cmd.Start()
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	return startOnSpawnThread(cmd)
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

// commandLine is pid's command line, /proc/<pid>/cmdline: its arguments NUL-separated (or
// the title redis-server rewrites it to).
func commandLine(pid int) (string, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return string(b), err
}

// processState is the state letter of /proc/<pid>/stat (R, S, T, Z, ...), 0 when the
// process does not exist.
func processState(pid int) byte {
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
