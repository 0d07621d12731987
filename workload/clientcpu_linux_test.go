package workload

import (
	"os"
	"testing"
)

// The machine's CPU from /proc/stat's first line: idle and iowait are the only idle time,
// steal is busy time (the hypervisor's) and counted apart as well; a kernel without the
// steal column reads none.
func TestParseHostCPU(t *testing.T) {
	tests := []struct {
		line string
		want hostTicks
		ok   bool
	}{
		// user nice system idle iowait irq softirq steal guest guest_nice
		{"cpu  1000 10 300 5000 40 20 30 600 0 0", hostTicks{busy: 1000 + 10 + 300 + 20 + 30 + 600, steal: 600, total: 7000}, true},
		{"cpu  1000 10 300 5000 40 20 30", hostTicks{busy: 1360, total: 6400}, true},
		{"cpu  1 2 3", hostTicks{}, false},
		{"cpu0 1000 10 300 5000 40 20 30 600 0 0", hostTicks{}, false},
		{"cpu  1000 x 300 5000 40", hostTicks{}, false},
	}
	for _, tt := range tests {
		got, ok := parseHostCPU([]byte(tt.line))
		if got != tt.want || ok != tt.ok {
			t.Errorf("parseHostCPU(%q) = %+v, %v; want %+v, %v", tt.line, got, ok, tt.want, tt.ok)
		}
	}
	if _, err := os.Stat("/proc/stat"); err != nil {
		return
	}
	h, ok := hostCPU()
	if !ok || h.total == 0 || h.busy > h.total || h.steal > h.busy {
		t.Errorf("hostCPU() on this machine = %+v, %v: want busy within total, steal within busy", h, ok)
	}
}
