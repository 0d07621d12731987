package server

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTick is USER_HZ, the unit of /proc/<pid>/stat's times: 100 on every Linux.
const clockTick = 10 * time.Millisecond

// cpuTime sums utime and stime of pid and of the live processes whose parent it is.
func cpuTime(pid int) (time.Duration, error) {
	ticks, _, err := statTicks(pid)
	if err != nil {
		return 0, err
	}
	for _, child := range children(pid) {
		if t, _, err := statTicks(child); err == nil {
			ticks += t
		}
	}
	return time.Duration(ticks) * clockTick, nil
}

// children lists the live processes whose parent is pid.
func children(pid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil || child == pid {
			continue
		}
		if _, ppid, err := statTicks(child); err == nil && ppid == pid {
			out = append(out, child)
		}
	}
	return out
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
