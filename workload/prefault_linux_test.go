package workload

import (
	"bytes"
	"os"
	"os/exec"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
)

const prefaultChildEnv = "LOCKBENCH_TEST_PREFAULT_CHILD"

// prefault leaves the pages it was asked for resident, ready for the start-up to take, and
// the collector as it found it once restored. The growth of resident memory is measured in
// a child process, this test binary again: in the package's own process, earlier tests (or
// an earlier -count) leave freed pages resident that the slice may reuse, and the growth
// then reads short of what was made resident.
func TestPrefaultMakesThePagesResident(t *testing.T) {
	const n = 64 << 20
	if os.Getenv(prefaultChildEnv) == "1" {
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
		os.Stdout.WriteString("GREW " + strconv.Itoa(after-before) + "\n")
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestPrefaultMakesThePagesResident$", "-test.count=1")
	cmd.Env = append(os.Environ(), prefaultChildEnv+"=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("child: %v\n%s\n%s", err, out, stderr.Bytes())
	}
	grew := -1
	for l := range strings.Lines(string(out)) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "GREW "); ok {
			grew, _ = strconv.Atoi(v)
		}
	}
	if grew < 0 {
		t.Fatalf("child printed no growth:\n%s", out)
	}
	if grew < n*9/10 {
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
