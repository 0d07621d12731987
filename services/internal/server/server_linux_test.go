//go:build linux

package server

import (
	"os"
	"testing"
)

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
