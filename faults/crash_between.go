package faults

import (
	"context"
	"errors"
	"fmt"

	"github.com/lockbench/lockbench/strategies"
)

// CrashBetween: a setnx-expire client dies between its two commands.
const CrashBetween Kind = "crash-between"

// errCrash is what a simulated client death looks like to the strategy.
var errCrash = errors.New("client killed between SETNX and EXPIRE")

// Seed 003: the client dies in setnx-expire's AfterSetNX hook, so EXPIRE is never sent and
// the key is locked for good. Strategies that set their ttl with the lock never run the hook.
func init() {
	register(kind{
		name:     CrashBetween,
		order:    100,
		required: []field{fieldP},
		summary:  "a setnx-expire client dies between SETNX and EXPIRE with probability p",
		hooks: func(f *fault) strategies.Hooks {
			return strategies.Hooks{AfterSetNX: func(context.Context, string, string) error {
				if f.fire() {
					return errCrash
				}
				return nil
			}}
		},
		end: func(f *fault, n uint64) string {
			return fmt.Sprintf("%d clients killed between SETNX and EXPIRE", n)
		},
	})
}
