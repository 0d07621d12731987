package stalls_test

import (
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/stalls"
)

// A process stopped by SIGSTOP for 800ms shows one stall of about that long.
func TestStoppedProcessIsAStall(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("needs SIGSTOP")
	}
	w := stalls.Start(5*time.Millisecond, 400*time.Millisecond)
	before := time.Now()
	// A child stops this process and lets it go on: nothing of ours runs in between.
	pid := strconv.Itoa(os.Getpid())
	cmd := exec.Command("sh", "-c", "sleep 0.2; kill -STOP "+pid+"; sleep 0.8; kill -CONT "+pid)
	if err := cmd.Run(); err != nil {
		t.Fatalf("stop and continue this process: %v", err)
	}
	after := time.Now()
	time.Sleep(50 * time.Millisecond)
	later := time.Now()
	got := w.Stop()
	t.Logf("stalls: %s", stalls.Format(got))
	var long []stalls.Stall
	for _, s := range got {
		if s.Gap >= 700*time.Millisecond {
			long = append(long, s)
		}
	}
	if len(long) != 1 || long[0].Gap > 5*time.Second {
		t.Errorf("stalls %s: want one of about 800ms", stalls.Format(got))
	}
	if f := stalls.Format(long); !strings.Contains(f, " for ") {
		t.Errorf("Format = %q: want the stall's time and length", f)
	}
	if in := w.Between(before, after, 700*time.Millisecond); len(in) != 1 {
		t.Errorf("Between the child's start and end: %s; want the stall", stalls.Format(in))
	}
	if in := w.Between(after.Add(time.Millisecond), later, 700*time.Millisecond); len(in) != 0 {
		t.Errorf("Between after the stall: %s; want none", stalls.Format(in))
	}
	if f := stalls.Format(nil); f != "none" {
		t.Errorf("Format(nil) = %q, want none", f)
	}
}
