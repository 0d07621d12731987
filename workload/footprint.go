package workload

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
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

// What starting a phase's workers costs in time (startWorkers: a goroutine each, its stack
// grown to 8 KiB, its state), before the warm-up: StartCPUPerWorker of CPU a worker, spread
// over the GOMAXPROCS CPUs the start-up runs on. Measured on this project's 2-core VM with
// BenchmarkStartWorkers in a fresh process (go test -run '^$' -bench StartWorkers
// -benchtime 100000x, and 300000x, ./workload): 40 to 56 µs of CPU a worker, user and sys
// (most of it the kernel's page faults on memory touched for the first time), the most of
// them taken. The VM was shared (load average 8), and there the wall time per worker was
// 52 to 64 µs over its 2 CPUs where this estimate says 28 µs: on a busy machine the
// start-up takes longer than estimated (100,000 workers started in 15.7 s there).
const (
	StartCPUPerWorker = 56 * time.Microsecond
	// MaxStartUp bounds the estimated start-up of a phase: a run whose workers would take
	// longer to start is refused, as it would seem to hang before its warm-up.
	MaxStartUp = 10 * time.Minute
	// StartUpNoticeAfter is the estimated start-up from which it is said before the run.
	StartUpNoticeAfter = 2 * time.Second
)

// StartUpTime is about how long starting the phase's workers takes on procs CPUs.
func (ph *Phase) StartUpTime(procs int) time.Duration {
	d := float64(ph.Concurrency()) * float64(StartCPUPerWorker) / float64(max(procs, 1))
	return time.Duration(min(d, float64(1<<62)))
}

// CheckStartUp refuses, before anything runs, a phase whose workers would take longer
// than MaxStartUp to start on procs CPUs (StartUpTime), naming the setting that makes them.
func CheckStartUp(phases []Phase, procs int) error {
	for _, ph := range phases {
		d := ph.StartUpTime(procs)
		if d <= MaxStartUp {
			continue
		}
		field := "workers"
		if ph.Rate > 0 {
			field = "max-inflight"
		}
		most := int64(MaxStartUp) * int64(max(procs, 1)) / int64(StartCPUPerWorker)
		return &ConfigError{Field: field, Value: strconv.Itoa(ph.Concurrency()), bare: true,
			Reason: fmt.Sprintf("starting the %s phase's %d workers would take about %s (%s of CPU each, on %d CPUs), more than the %s a start-up may take; want at most %d",
				ph.Strategy, ph.Concurrency(), roundStartUp(d), StartCPUPerWorker, max(procs, 1), roundStartUp(MaxStartUp), most)}
	}
	return nil
}

// StartUpNotice is the line that says, before the run, how long its largest phase's
// workers take to start on procs CPUs, when that is StartUpNoticeAfter or more (see
// StartUpTime); "" otherwise.
func StartUpNotice(phases []Phase, procs int) string {
	var most *Phase
	for i := range phases {
		if most == nil || phases[i].Concurrency() > most.Concurrency() {
			most = &phases[i]
		}
	}
	if most == nil {
		return ""
	}
	d := most.StartUpTime(procs)
	if d < StartUpNoticeAfter {
		return ""
	}
	return fmt.Sprintf("starting %d workers takes about %s before the warm-up; the measured window starts after", most.Concurrency(), roundStartUp(d))
}

// roundStartUp is d as the estimate's lines say it: whole seconds, tenths below 10s.
func roundStartUp(d time.Duration) time.Duration {
	if d < 10*time.Second {
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Second)
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
