package faults

import (
	"context"
	"fmt"

	"github.com/lockbench/lockbench/internal/clock"
	"github.com/lockbench/lockbench/strategies"
)

// ReleasePause: a release stalls between its commands.
const ReleasePause Kind = "release-pause"

// The stall sits in the strategy's ReleasePause hook: for get-del between its GET and its
// DEL, the check-then-delete window of seeds 003/004.
func init() {
	register(kind{
		name:     ReleasePause,
		order:    30,
		required: []field{fieldP, fieldD},
		summary:  "a release stalls for d with probability p: get-del's between its GET and DEL, the others' before their first command",
		hooks: func(f *fault) strategies.Hooks {
			return strategies.Hooks{ReleasePause: func(ctx context.Context, _, _ string) {
				if f.fire() {
					clock.Sleep(ctx, f.D)
				}
			}}
		},
		end: func(f *fault, n uint64) string {
			return fmt.Sprintf("%d releases stalled %s before their delete (get-del: between GET and DEL)", n, f.D)
		},
	})
}
