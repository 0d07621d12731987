package workload

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"
)

type ctxKey struct{}

func TestAcquireCtx(t *testing.T) {
	parent, cancel := context.WithCancel(context.WithValue(context.Background(), ctxKey{}, "v"))
	defer cancel()
	c := newAcquireCtx(parent, parent)
	defer c.close()

	// Times out like context.WithTimeout.
	ctx := c.start(time.Now(), 20*time.Millisecond)
	if ctx.Err() != nil {
		t.Fatalf("armed context already ended: %v", ctx.Err())
	}
	if dl, ok := ctx.Deadline(); !ok || time.Until(dl) > 20*time.Millisecond {
		t.Fatalf("deadline %v, %v", dl, ok)
	}
	if ctx.Value(ctxKey{}) != "v" {
		t.Fatal("values of the parent are not visible")
	}
	mustEnd(t, ctx, context.DeadlineExceeded, "its deadline")
	c.stop()

	// Reused after a timeout: a fresh context.
	ctx = c.start(time.Now(), time.Hour)
	if ctx.Err() != nil {
		t.Fatalf("reused context starts ended: %v", ctx.Err())
	}
	c.stop()

	// A firing armed for an acquire that is over does not end the next one.
	c.start(time.Now(), time.Millisecond)
	c.stop()
	c.expire() // as a timer would if Stop lost the race
	ctx = c.start(time.Now(), time.Hour)
	if ctx.Err() != nil {
		t.Fatalf("a stale firing ended the next acquire: %v", ctx.Err())
	}

	// The timer armed for a short acquire fires during a longer one that followed: it
	// re-arms for the rest of that one's time instead of ending it.
	c.stop()
	c.start(time.Now(), 30*time.Millisecond)
	c.stop()
	ctx = c.start(time.Now(), 500*time.Millisecond)
	later, _ := ctx.Deadline()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		// the earlier timer fired and re-armed for this acquire's deadline
		rearmed := c.fireAt.Load() == c.deadline.Load()
		if rearmed || ctx.Err() != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the timer armed for the earlier acquire never fired")
		}
	}
	if ctx.Err() != nil && time.Now().Before(later) {
		t.Fatalf("the timer of an earlier acquire ended a later one: %v", ctx.Err())
	}
	mustEnd(t, ctx, context.DeadlineExceeded, "the re-armed deadline")
	c.stop()
	ctx = c.start(time.Now(), time.Hour)

	// The parent's cancellation ends the armed context, and every later one.
	cancel()
	mustEnd(t, ctx, context.Canceled, "the parent's cancellation")
	c.stop()
	if ctx = c.start(time.Now(), time.Hour); !errors.Is(ctx.Err(), context.Canceled) {
		t.Fatalf("after the parent ended: %v, want context.Canceled", ctx.Err())
	}
}

// mustEnd waits for ctx to end, as it must after why, with the error want.
func mustEnd(t *testing.T, ctx context.Context, want error, why string) {
	t.Helper()
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatalf("not done after %s", why)
	}
	if !errors.Is(ctx.Err(), want) {
		t.Fatalf("after %s: Err %v, want %v", why, ctx.Err(), want)
	}
}

// Contexts derived from an acquire's context (redlock derives one per node) end with it,
// and reusing the acquire context afterwards never changes what an ended one reports: the
// context package panics ("missing cancel error") if a parent's Done is closed while its Err
// says nil.
func TestAcquireCtxDerivedContexts(t *testing.T) {
	t.Parallel()
	parent, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() {
			c := newAcquireCtx(parent, parent)
			defer c.close()
			for i := range 1000 {
				ctx := c.start(time.Now(), 50*time.Microsecond)
				child, cancelChild := context.WithTimeout(ctx, time.Hour)
				if i%2 == 0 {
					// Move on as soon as the acquire's context ends, as a worker does: the
					// derived context may still be on its way to ending.
					<-ctx.Done()
				} else {
					select {
					case <-child.Done():
					case <-time.After(5 * time.Second):
						t.Error("a derived context did not end with its acquire")
					}
					if !errors.Is(child.Err(), context.DeadlineExceeded) {
						t.Errorf("derived context ended with %v, want the acquire's deadline", child.Err())
					}
				}
				cancelChild()
				c.stop()
			}
		})
	}
	wg.Wait()
}

// The reused context against what it replaces: context.WithTimeout per acquire.
func BenchmarkAcquireContext(b *testing.B) {
	parent, cancel := context.WithCancel(context.Background())
	defer cancel()
	b.Run("reused", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			c := newAcquireCtx(parent, parent)
			defer c.close()
			for pb.Next() {
				_ = c.start(time.Now(), 5*time.Second).Done()
				c.stop()
			}
		})
	})
	b.Run("WithTimeout", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				ctx, cancel := context.WithTimeout(parent, 5*time.Second)
				_ = ctx.Done()
				cancel()
			}
		})
	})
}

// An acquire whose start takes no lock (the timer already set for an earlier, shorter
// deadline) is never ended by that timer's firing: short acquires that time out or stop
// just as their timer fires alternate with long ones, which must all run on. The timer's
// firing and the lock-free start race on every round.
func TestAcquireCtxLockFreeStartNeverEndsEarly(t *testing.T) {
	parent, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := newAcquireCtx(parent, parent)
	defer c.close()
	deadline := time.Now().Add(10 * time.Second) // bounds the loop on a slow machine
	for i := 0; i < 5000 && time.Now().Before(deadline); i++ {
		short := time.Duration(1+i%50) * time.Microsecond
		ctx := c.start(time.Now(), short)
		if i%3 == 0 {
			<-ctx.Done() // let it time out
		}
		c.stop()
		ctx = c.start(time.Now(), time.Hour)
		for range i % 4 {
			runtime.Gosched() // give the short timer's firing a chance to land now
		}
		if err := ctx.Err(); err != nil {
			t.Fatalf("round %d: an acquire of an hour ended after a %s one: %v", i, short, err)
		}
		c.stop()
	}
}
