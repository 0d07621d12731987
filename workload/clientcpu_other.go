//go:build !linux

package workload

import "time"

// processCPU: only Linux is measured.
func processCPU() (time.Duration, bool) { return 0, false }

// hostCPU: only Linux has /proc/stat.
func hostCPU() (hostTicks, bool) { return hostTicks{}, false }
