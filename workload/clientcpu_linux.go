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

// hostCPU is the machine's CPU time so far, in clock ticks summed over its cores, from the
// first line of /proc/stat.
func hostCPU() (hostTicks, bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return hostTicks{}, false
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	return parseHostCPU(line)
}

// parseHostCPU reads /proc/stat's first line: "cpu user nice system idle iowait irq softirq
// steal guest guest_nice". Guest time is already inside user and nice; steal (a VM's vCPUs
// ready to run while the hypervisor ran something else) is busy time, and counted apart too.
// Kernels before 2.6.11 have no steal column: it reads 0 there.
func parseHostCPU(line []byte) (t hostTicks, ok bool) {
	f := bytes.Fields(line)
	if len(f) < 5 || string(f[0]) != "cpu" {
		return hostTicks{}, false
	}
	for i, v := range f[1:min(len(f), 9)] {
		n, err := strconv.ParseUint(string(v), 10, 64)
		if err != nil {
			return hostTicks{}, false
		}
		t.total += n
		if i != 3 && i != 4 { // idle, iowait
			t.busy += n
		}
		if i == 7 {
			t.steal = n
		}
	}
	return t, t.total > 0
}
