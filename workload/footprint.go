package workload

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// What a phase costs this process in memory, measured (token, 10,000 keys, linux/amd64, a
// 1s window): a worker 8 KiB of stack, grown there as it starts (parkFrame; some grow to
// 16 KiB in their cycles), and about 1.5 KiB of heap (its goroutine, state and acquire
// context), plus what it has in flight — peak RSS 1.26 GiB for 100,000 workers, 12.0 GiB
// for 1,000,000: 13 KiB each covers both. A key's oracle state and name take about 120
// bytes, the process itself about 64 MiB.
const (
	BytesPerWorker = 13 << 10
	BytesPerKey    = 128
	BytesBase      = 64 << 20
)

// MemoryNeed is about the memory the phase needs, in bytes.
func (ph *Phase) MemoryNeed() float64 {
	return float64(BytesBase) + float64(ph.Concurrency())*BytesPerWorker + float64(ph.Keys)*BytesPerKey
}

// CheckMemory refuses, before anything runs, a phase whose workers and keys would not fit
// in 90% of avail bytes, naming the setting that weighs most: a run of two billion workers
// would otherwise die of an out-of-memory crash with a page of stack. avail 0 (unknown)
// refuses nothing.
func CheckMemory(phases []Phase, avail uint64) error {
	if avail == 0 {
		return nil
	}
	for _, ph := range phases {
		need := ph.MemoryNeed()
		if need <= 0.9*float64(avail) {
			continue
		}
		field, n := "workers", ph.Workers
		switch {
		case ph.Rate > 0 && float64(ph.MaxInflight)*BytesPerWorker > float64(ph.Keys)*BytesPerKey:
			field, n = "max-inflight", ph.MaxInflight
		case float64(ph.Keys)*BytesPerKey > float64(ph.Concurrency())*BytesPerWorker:
			field, n = "keys", ph.Keys
		}
		return &ConfigError{Field: field, Value: strconv.Itoa(n), bare: true,
			Reason: fmt.Sprintf("the %s phase would need about %s of memory (%s a worker, %d B a key), and this machine has %s available",
				ph.Strategy, formatBytes(need), formatBytes(BytesPerWorker), BytesPerKey, formatBytes(float64(avail)))}
	}
	return nil
}

// formatBytes is n bytes in binary units: 11.2 GiB.
func formatBytes(n float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	i := 0
	for n >= 1024 && i < len(units)-1 {
		n /= 1024
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%.0f B", n)
	}
	return fmt.Sprintf("%.1f %s", n, units[i])
}

// AvailableMemory is MemAvailable of /proc/meminfo in bytes; 0 where it cannot be read.
func AvailableMemory() uint64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "MemAvailable:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}
