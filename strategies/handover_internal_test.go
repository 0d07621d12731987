package strategies

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/redistest"
)

// A release by this process acquires the lock for the next local waiter in the same round
// trip (token.releaseTo) when no other process waits: the waiter finds the lock handed over
// when it wakes, holding it under its own token, and a lock handed to a waiter that stopped
// waiting is passed on. (On a server that has not seen the script yet, the first release
// runs it by EVAL and hands over all the same.)
func TestTokenHandsTheLockToTheNextLocalWaiter(t *testing.T) {
	t.Parallel()
	_, c := redistest.Server(t)
	s, err := New("token", Options{Client: c, Params: Params{TTL: TTLOf(time.Minute), Wait: Wait{Kind: WaitPubSub}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	tok := s.(*token)
	ctx := context.Background()
	key := redistest.Prefix(t) + "k"
	ch := tok.channel(key)
	lockValue := func() string {
		v, _ := c.Do(ctx, c.B().Get().Key(key).Build()).ToString()
		return v
	}

	holder, err := s.Acquire(ctx, key, "holder")
	if err != nil {
		t.Fatal(err)
	}
	w, err := tok.notify.enter(key, ch, "", "waiter")
	if err != nil {
		t.Fatal(err)
	}
	if err := holder.Release(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-w.wake:
	default:
		t.Fatal("the release did not wake the waiter it acquired the lock for")
	}
	got := tok.notify.take(w)
	if got == nil {
		t.Fatal("nothing handed over to the waiter")
	}
	l := got.(*lease)
	if l.owner != "waiter" || !strings.HasPrefix(l.token, "waiter:") || lockValue() != l.token {
		t.Fatalf("handed over: owner %q token %q; the lock holds %q", l.owner, l.token, lockValue())
	}
	if tok.notify.leave(w) != nil {
		t.Fatal("a taken lease was handed back on leave")
	}

	// The waiter stops waiting while its lock is being acquired: handOver refuses, and
	// the caller (releaseTo) releases the lock instead.
	w2, _ := tok.notify.enter(key, ch, "", "gone")
	if r, _ := tok.notify.reserveNext(ch); r != w2 {
		t.Fatal("reserveNext did not pick the only waiter")
	}
	tok.notify.leave(w2)
	if tok.notify.handOver(w2, got, false) {
		t.Fatal("handOver gave a lock to a waiter that left")
	}

	// A lock handed over but never taken is released when the waiter leaves.
	w3, _ := tok.notify.enter(key, ch, "", "late")
	if err := got.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(lockValue(), "late:") {
		t.Fatalf("lock holds %q, want it handed to the waiter \"late\"", lockValue())
	}
	tok.leave(w3)
	if v := lockValue(); v != "" {
		t.Fatalf("an untaken handover was not released: the lock holds %q", v)
	}
}
