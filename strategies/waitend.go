package strategies

import (
	"context"
	"fmt"
)

// waitEndKey is the context key of WithWaitEnd's channel.
type waitEndKey struct{}

// WithWaitEnd returns ctx carrying end: an acquire under ctx (or a context derived from
// it) that is sleeping between two attempts stops waiting once end is closed, and returns
// ErrNotAcquired; a command it has sent is never cut by it. The engine closes end when a
// phase stops taking cycles: an acquire begun before the window's end then ends at the
// phase's end instead of sleeping on until its acquire timeout, or until the drain's grace
// cancels it (which may cut an acquire between two commands).
func WithWaitEnd(ctx context.Context, end <-chan struct{}) context.Context {
	return context.WithValue(ctx, waitEndKey{}, end)
}

// waitEnd is ctx's WithWaitEnd channel; nil (never ready) without one.
func waitEnd(ctx context.Context) <-chan struct{} {
	end, _ := ctx.Value(waitEndKey{}).(<-chan struct{})
	return end
}

// waitEnded reports whether ctx's WithWaitEnd channel is closed.
func waitEnded(ctx context.Context) bool {
	select {
	case <-waitEnd(ctx):
		return true
	default:
		return false
	}
}

// waitEndedErr is an acquire's end at WithWaitEnd's end.
func waitEndedErr(key string) error {
	return fmt.Errorf("%w: key %s: the phase ended while it waited", ErrNotAcquired, key)
}
