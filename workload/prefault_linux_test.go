package workload

import (
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
)

// prefault leaves the pages it was asked for resident, ready for the start-up to take, and
// the collector as it found it once restored.
func TestPrefaultMakesThePagesResident(t *testing.T) {
	const n = 64 << 20
	before := residentBytes(t)
	restore := prefault(n)
	after := residentBytes(t)
	if gc := debug.SetGCPercent(-1); gc != -1 {
		t.Errorf("GC percent %d during the start-up, want -1 (off)", gc)
	}
	restore()
	old := debug.SetGCPercent(100)
	debug.SetGCPercent(old)
	if old == -1 {
		t.Error("the collector is still off after restore")
	}
	if grew := after - before; grew < n*9/10 {
		t.Errorf("resident memory grew by %d KiB, want about %d KiB made resident", grew>>10, n>>10)
	}
}

func residentBytes(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for l := range strings.Lines(string(b)) {
		if f := strings.Fields(l); len(f) == 3 && f[0] == "VmRSS:" {
			kb, err := strconv.Atoi(f[1])
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmRSS in /proc/self/status")
	return 0
}
