package strategies

import (
	"context"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/redistest"
)

// A token acquire+release allocates the lease and its token string, nothing else: the
// attempt closure stays on the stack (the native hook is a concrete type) and the PX
// argument is formatted once (issue 32: it was 4).
func TestTokenCycleAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates on its own")
	}
	_, c := redistest.Server(t)
	s, err := New("token", Options{Client: c, Params: Params{TTL: TTLOf(time.Minute), Wait: Wait{Kind: WaitBackoff}}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	key := redistest.Prefix(t) + "k"
	cycle := func() {
		l, err := s.Acquire(ctx, key, "a")
		if err != nil || l == nil {
			t.Fatalf("acquire: %v", err)
		}
		if err := l.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	cycle() // rueidis's pools and rings warm up
	if n := testing.AllocsPerRun(200, cycle); n > 2 {
		t.Errorf("a token acquire+release allocates %.1f times, want at most 2 (the lease and its token)", n)
	}
}
