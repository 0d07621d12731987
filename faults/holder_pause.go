package faults

import (
	"context"
	"fmt"

	"github.com/lockbench/lockbench/internal/clock"
)

// HolderPause: a critical section stalls; renewals keep running.
const HolderPause Kind = "holder-pause"

// Only the holder's goroutine stalls: its watchdog keeps renewing, as it would when the
// holder waits on something slow rather than the whole client stopping (see process-pause).
func init() {
	register(kind{
		name:     HolderPause,
		order:    10,
		required: []field{fieldP, fieldD},
		summary:  "a critical section stalls for d with probability p; its lease's renewals keep running",
		stall: func(ctx context.Context, f *fault, _ string) {
			if f.fire() {
				clock.Sleep(ctx, f.D)
			}
		},
		end: func(f *fault, n uint64) string {
			return fmt.Sprintf("%d holders stalled %s inside the critical section", n, f.D)
		},
	})
}
