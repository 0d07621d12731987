package workload

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
	"time"
)

// processCPU is this process's CPU time so far, user + system.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}

// hostCPU is the machine's CPU time so far, busy and in all (busy + idle + iowait), in
// clock ticks, summed over its cores: the first line of /proc/stat.
func hostCPU() (busy, total uint64, ok bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, false
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	f := bytes.Fields(line)
	if len(f) < 5 || string(f[0]) != "cpu" {
		return 0, 0, false
	}
	// user nice system idle iowait irq softirq steal guest guest_nice; guest time is
	// already inside user and nice.
	for i, v := range f[1:min(len(f), 9)] {
		n, err := strconv.ParseUint(string(v), 10, 64)
		if err != nil {
			return 0, 0, false
		}
		total += n
		if i != 3 && i != 4 { // idle, iowait
			busy += n
		}
	}
	return busy, total, total > 0
}
