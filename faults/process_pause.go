package faults

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/lockbench/lockbench/strategies"
)

// ProcessPause: the holder and its renewals freeze together.
const ProcessPause Kind = "process-pause"

// Point is where in a lock cycle a process-pause freezes its holder.
type Point string

const (
	// PointHold freezes the holder after its hold (Set.Stall), the default.
	PointHold Point = "hold"
	// PointWrite freezes the holder between its lease check (--on-lost abort) and its last
	// write to the resource (Set.StallWrite): the holder saw its lease alive, then writes
	// after it lapsed — Kleppmann's case that no client-side check closes the window.
	PointWrite Point = "write"
)

var points = []Point{PointHold, PointWrite}

func pointNames() []string {
	out := make([]string, len(points))
	for i, p := range points {
		out[i] = string(p)
	}
	return out
}

var fieldPoint = field{
	name:        "point",
	placeholder: strings.Join(pointNames(), "|"),
	def:         string(PointHold),
	parse: func(s *Spec, v string) error {
		s.Point = Point(v)
		if !slices.Contains(points, s.Point) {
			return fmt.Errorf("want one of %s", strings.Join(pointNames(), ", "))
		}
		return nil
	},
}

// A stop-the-world pause (a GC, a VM migration) freezes the whole client: the holder at its
// point, and its lease's renewals, which wait in the BeforeRenew hook until it thaws.
func init() {
	register(kind{
		name:     ProcessPause,
		order:    20,
		required: []field{fieldP, fieldD},
		optional: []field{fieldPoint},
		summary: "the holder and its renewals freeze for d with probability p (a stop-the-world pause)\n" +
			"at point=hold (the default) after the hold; at point=write between the lease check (--on-lost abort)\n" +
			"and the last write to the resource: the window no client-side check closes",
		hooks: func(f *fault) strategies.Hooks {
			return strategies.Hooks{BeforeRenew: f.set.awaitOwner, OnPause: f.set.onPause}
		},
		stall: func(ctx context.Context, f *fault, owner string) {
			if f.Point != PointWrite && f.fire() {
				f.set.freeze(ctx, owner, f.D)
			}
		},
		stallWrite: func(ctx context.Context, f *fault, owner string) {
			if f.Point == PointWrite && f.fire() {
				f.set.freeze(ctx, owner, f.D)
			}
		},
		end: func(f *fault, n uint64) string {
			what := fmt.Sprintf("%d holders frozen %s with their renewals", n, f.D)
			if f.Point == PointWrite {
				what += " between their lease check and their last write"
			}
			return what
		},
	})
}
