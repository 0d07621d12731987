package driver_test

import (
	"context"
	"testing"
	"time"
)

// The protocol's own cost per lock cycle: an acquire and a release of an uncontended key
// through the null driver (no Redis behind it), one goroutine at a time — two round trips
// through the pipes and the driver, and what lockbench allocates for them.
func BenchmarkNullDriverCycle(b *testing.B) {
	s := build(b, testdriver(b)+" null", target(b))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b.ReportAllocs()
	for b.Loop() {
		l, err := s.Acquire(ctx, "bench", "w")
		if err != nil {
			b.Fatal(err)
		}
		if err := l.Release(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
