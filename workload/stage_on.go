//go:build stagetrace

package workload

import (
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"syscall"
	"time"
)

var (
	stageMu   sync.Mutex
	stageZero = time.Now()
	stageLast = stageZero
)

// stage prints, to stderr, the time since the process began and since the last stage, the
// process's CPU, heap, stacks, goroutines and resident memory.
func stage(name string) {
	stageMu.Lock()
	defer stageMu.Unlock()
	now := time.Now()
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/heap/stacks:bytes"}}
	metrics.Read(s)
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	fmt.Fprintf(os.Stderr, "stage %-14s at %6.2fs (+%5.2fs) cpu %6.2fs heap %4d MiB stacks %4d MiB goroutines %6d rss %s\n",
		name, now.Sub(stageZero).Seconds(), now.Sub(stageLast).Seconds(), cpu.Seconds(),
		s[0].Value.Uint64()>>20, s[1].Value.Uint64()>>20, runtime.NumGoroutine(), rss())
	stageLast = now
}

func rss() string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "?"
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmRSS:") || strings.HasPrefix(l, "VmHWM:") {
			out = append(out, strings.Join(strings.Fields(l), " "))
		}
	}
	return strings.Join(out, " ")
}
