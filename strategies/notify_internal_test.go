package strategies

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/redistest"
)

// An acquire that times out while its SUBSCRIBE waits for Redis gives up alone: the shared
// connection is kept, and the SUBSCRIBE, completed after all, serves the next waiter on
// that channel. (Condemning the connection instead failed every waiter then waiting for a
// confirmation on it — a cascade of errors on a merely slow Redis.)
func TestSubscribeOutlivesTheWaiterThatSentIt(t *testing.T) {
	t.Parallel()
	_, c := redistest.Server(t) // a server of its own: this test pauses it
	n, err := newNotifier(c, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.close)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	prefix := redistest.Prefix(t)

	warm, _ := n.enter(prefix+"k0", prefix+"ch0", "", "o0")
	if err := n.subscribe(ctx, warm); err != nil {
		t.Fatal(err)
	}
	n.leave(warm)

	// Redis holds every command for 300ms; the first waiter on ch1 gives up after 30ms.
	if err := c.Do(ctx, c.B().ClientPause().Timeout(300).All().Build()).Error(); err != nil {
		t.Fatal(err)
	}
	first, _ := n.enter(prefix+"k1", prefix+"ch1", "", "o1")
	short, cancelShort := context.WithTimeout(ctx, 30*time.Millisecond)
	err = n.subscribe(short, first)
	cancelShort()
	n.leave(first)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("subscribe with a 30ms deadline on a paused Redis: %v, want the deadline", err)
	}

	next, _ := n.enter(prefix+"k1", prefix+"ch1", "", "o2")
	defer n.leave(next)
	if err := n.subscribe(ctx, next); err != nil {
		t.Fatalf("the next waiter on the channel: %v", err)
	}
	n.mu.Lock()
	gen := n.gen
	n.mu.Unlock()
	if gen != 1 || n.subscribes.Load() != 2 {
		t.Fatalf("%d connections, %d SUBSCRIBEs; want 1 connection and one SUBSCRIBE per channel (2)", gen, n.subscribes.Load())
	}
}
