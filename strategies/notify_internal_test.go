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
	n, err := newNotifier(c, "60000")
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

// A waiter that registers while a release is on its way — after the release looked for
// local waiters, and too early for its own last try to find the lock free — is woken when
// the release finds that no process took the turn (turnNobody): otherwise it slept until
// its timer, a whole ttl, and at 10,000 workers some timed out (scripts/bench.sh's scale
// row: 26 starved, 13,615 timeouts).
func TestReleaseWakesAWaiterThatCameMeanwhile(t *testing.T) {
	t.Parallel()
	_, c := redistest.Server(t)
	s, err := New("fenced", Options{Client: c, Params: Params{Wait: Wait{Kind: WaitPubSub}, TTL: TTLOf(time.Minute)}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	b := s.(*fenced).base
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	key := redistest.Prefix(t) + "k"
	l, err := s.Acquire(ctx, key, "holder")
	if err != nil {
		t.Fatal(err)
	}
	// The release looks now: nobody waits here, so it passes a turn nobody takes.
	ch := b.channel(key)
	looked := b.notify.hasWaiters(ch)
	w, err := b.notify.enter(key, ch, "", "late") // ...and the waiter comes in meanwhile
	if err != nil {
		t.Fatal(err)
	}
	defer b.notify.leave(w)
	ll := l.(*lease)
	r, err := turnScript.Exec(ctx, c, []string{waitList(key), ll.key}, append(b.turnArgs(ch, looked), ll.token, "")).AsInt64()
	if err != nil {
		t.Fatal(err)
	}
	if r != turnNobody {
		t.Fatalf("turn.lua answered %d for a release nobody else waits on; want %d (no process took the turn)", r, turnNobody)
	}
	if err := b.turned(key, r); err != nil {
		t.Fatal(err)
	}
	select {
	case <-w.wake:
	default:
		t.Fatal("the waiter that came in during the release was not woken: it would sleep a ttl")
	}
}
