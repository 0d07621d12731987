package faults

import (
	"context"
	"fmt"
	"time"

	"github.com/lockbench/lockbench/strategies"
)

// ClockSkew: some workers' clocks are off.
const ClockSkew Kind = "clock-skew"

var (
	fieldFraction = probabilityField("fraction", func(s *Spec) *float64 { return &s.Fraction })
	// fieldOffset may be negative: a clock behind.
	fieldOffset = field{name: "offset", placeholder: "D", parse: func(s *Spec, v string) error {
		var err error
		s.Offset, err = time.ParseDuration(v)
		if err == nil && (s.Offset < -maxOffset || s.Offset > maxOffset) {
			err = fmt.Errorf("offset must be from -%s to %s", maxOffset, maxOffset)
		}
		return err
	}}
)

// maxOffset bounds clock-skew's offset: the staleness the client-clock strategies judge is
// a matter of seconds, and a clock a century off makes timestamps no strategy can hold.
const maxOffset = 24 * time.Hour

// The first fraction of the workers read a clock shifted by the offset, through the
// strategies' clock in their context: what a strategy that trusts client clocks decides
// with (getset's and setnx-stale's staleness).
func init() {
	register(kind{
		name:     ClockSkew,
		order:    90,
		required: []field{fieldFraction, fieldOffset},
		summary:  "that fraction of workers reads a clock shifted by offset",
		worker: func(ctx context.Context, f *fault, worker int) context.Context {
			if worker >= skewed(f) {
				return ctx
			}
			return strategies.WithClock(ctx, func() time.Time { return time.Now().Add(f.Offset) })
		},
		begin: func(f *fault) string {
			return fmt.Sprintf("%d of %d workers read a clock %s off", skewed(f), f.set.workers, f.Offset)
		},
	})
}

// skewed is how many workers read the shifted clock.
func skewed(f *fault) int { return int(f.Fraction*float64(f.set.workers) + 0.5) }
