package workload

import (
	"testing"
	"time"
)

func TestConstantPacer(t *testing.T) {
	p := ConstantPacer{Rate: 100} // one arrival every 10ms
	for _, tc := range []struct {
		elapsed time.Duration
		hits    uint64
		want    time.Duration
	}{
		{0, 0, 0},                     // the first is due at once
		{0, 1, 10 * time.Millisecond}, // the second in 10ms
		{4 * time.Millisecond, 1, 6 * time.Millisecond},  // part of the gap has passed
		{25 * time.Millisecond, 2, 0},                    // behind: go now
		{25 * time.Millisecond, 3, 5 * time.Millisecond}, // caught up
		{time.Second, 100, 0},                            // exactly on time
		{time.Second, 101, 10 * time.Millisecond},        // one ahead
		{10 * time.Second, 500, 0},                       // far behind: no skipping, no sleep
		{999 * time.Millisecond, 100, time.Millisecond},  // rounding stays exact
	} {
		if got := p.Pace(tc.elapsed, tc.hits); got != tc.want {
			t.Errorf("Pace(%s, %d) = %s, want %s", tc.elapsed, tc.hits, got, tc.want)
		}
	}
	if got := (ConstantPacer{Rate: 3}).Due(1); got != 333333333*time.Nanosecond {
		t.Errorf("Due(1) at 3/s = %s", got)
	}
}
