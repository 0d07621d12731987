package faults

import (
	"context"
	"fmt"

	"github.com/lockbench/lockbench/strategies"
)

// HolderCrash: a holder dies inside its critical section.
const HolderCrash Kind = "holder-crash"

// Seed 003's first point, the reason leases exist: a holder dies holding the lock. It never
// releases, and its renewals die with it: the BeforeRenew hook holds a dead owner's renewal
// until the renewal's context ends (the engine gives the dead lease up after the phase).
// What frees the key then is the service's own doing — a Redis ttl, an etcd lease, a
// ZooKeeper session — and the engine measures how long that took. The worker goes on as a
// new client with a new owner, so the load goes on.
func init() {
	register(kind{
		name:     HolderCrash,
		order:    15,
		required: []field{fieldP},
		summary: "a holder dies inside its critical section with probability p: it never releases and its renewals stop;\n" +
			"the worker goes on as a new client",
		hooks: func(f *fault) strategies.Hooks { return strategies.Hooks{BeforeRenew: f.set.awaitDead} },
		crash: func(f *fault, owner string) bool {
			if !f.fire() {
				return false
			}
			f.set.dead.Store(owner, struct{}{})
			return true
		},
		end: func(f *fault, n uint64) string {
			return fmt.Sprintf("%d holders died inside the critical section", n)
		},
	})
}

// awaitDead blocks a dead owner's renewal for good: until the renewal's context ends (its
// lease given up, its strategy closed) or the phase's faults are over.
func (s *Set) awaitDead(ctx context.Context, _, owner string) {
	if _, ok := s.dead.Load(owner); ok {
		select {
		case <-ctx.Done():
		case <-s.over:
		}
	}
}
