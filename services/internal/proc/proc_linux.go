package proc

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// On Linux a spawned server dies with lockbench however lockbench ends, SIGKILL included
// (the parent-death signal), and runs in a process group of its own so that a Ctrl-C in
// the shell reaches lockbench only, which stops its servers itself (target does the same
// for redis-server).
func start(cmd *exec.Cmd) error {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	cmd.SysProcAttr.Setpgid = true
	done := make(chan error, 1)
	spawnThread() <- func() { done <- cmd.Start() }
	return <-done
}

// The kernel sends the parent-death signal when the *thread* that started the child ends
// (go.dev/issue/27505): every server is started from one locked thread that never ends.
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

// clockTick is USER_HZ, the unit of /proc/<pid>/stat's times: 100 on every Linux.
const clockTick = 10 * time.Millisecond

// cpuTime sums utime and stime of pid and of the live processes whose parent it is.
func cpuTime(pid int) (time.Duration, error) {
	ticks, _, err := statTicks(pid)
	if err != nil {
		return 0, err
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil || child == pid {
			continue
		}
		t, ppid, err := statTicks(child)
		if err == nil && ppid == pid {
			ticks += t
		}
	}
	return time.Duration(ticks) * clockTick, nil
}

// statTicks reads utime + stime and the parent pid from /proc/<pid>/stat.
func statTicks(pid int) (ticks uint64, ppid int, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, err
	}
	// "pid (comm) S ppid ...": comm may hold spaces and parentheses; fields follow the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] state, f[1] ppid, ..., f[11] utime, f[12] stime (fields 14 and 15 of stat(5)).
	if len(f) < 13 {
		return 0, 0, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	ppid, _ = strconv.Atoi(f[1])
	u, err1 := strconv.ParseUint(f[11], 10, 64)
	s, err2 := strconv.ParseUint(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	return u + s, ppid, nil
}
