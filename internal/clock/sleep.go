// Package clock holds the one way lockbench waits: a sleep that a context cuts short.
package clock

import (
	"context"
	"time"
)

// Sleep waits d unless ctx ends first; it reports whether the full time passed. d <= 0
// returns at once, true unless ctx has ended.
func Sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
