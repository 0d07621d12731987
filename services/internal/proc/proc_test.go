//go:build linux

package proc

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// A killed lockbench leaves its servers' directories behind; the next one removes those
// whose owner is gone, and leaves a live owner's alone.
func TestSweepRemovesDeadOwnersDirectories(t *testing.T) {
	root := t.TempDir()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Skip("no true(1):", err)
	}
	mk := func(name string, pid int) string {
		dir := filepath.Join(root, name)
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(strconv.Itoa(pid)), 0o600); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	gone := mk("lockbench-etcd-1", dead.Process.Pid)
	live := mk("lockbench-postgres-2", os.Getpid())
	other := mk("lockbench-redis-3", dead.Process.Pid) // target's, not ours to sweep
	sweep(root)
	if _, err := os.Stat(gone); !os.IsNotExist(err) {
		t.Errorf("the directory of a dead owner is still there (%v)", err)
	}
	for _, d := range []string{live, other} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s was removed: %v", d, err)
		}
	}
}

// CPU reads this process's own time from /proc: it grows as the process works.
func TestCPUTimeGrows(t *testing.T) {
	before, err := cpuTime(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	x := 0
	for i := range 200_000_000 {
		x += i
	}
	_ = x
	after, err := cpuTime(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if after <= before {
		t.Errorf("CPU time %s then %s after a busy loop; want it to grow", before, after)
	}
}
