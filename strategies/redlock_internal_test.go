package strategies

import (
	"context"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/lockbench/lockbench/internal/redistest"
)

// splitVote starts three masters on which two other contenders hold key on nodes 0 and 2,
// so that a round can win node 1 only: a split vote, which lasts as long as they hold on.
func splitVote(t *testing.T) (nodes []rueidis.Client, key string) {
	t.Helper()
	for _, srv := range redistest.Start(t, 3) {
		nodes = append(nodes, redistest.Client(t, srv.Addr))
	}
	key = redistest.Prefix(t) + "k"
	for i, holder := range map[int]string{0: "x", 2: "y"} {
		c := nodes[i]
		if err := c.Do(context.Background(), c.B().Set().Key(key).Value(holder).PxMilliseconds(time.Minute.Milliseconds()).Build()).Error(); err != nil {
			t.Fatal(err)
		}
	}
	return nodes, key
}

// After a split vote, redlock waits a random delay before its next round under every wait
// policy (Antirez: retry after a random delay, to desynchronize the clients): on top of spin
// and backoff, in place of pubsub's ttl-long timer. A round that no node granted waits per
// the policy alone. No clock is read: the round's answer and the pause are checked directly.
func TestRedlockSplitVoteDelaysTheRetryUnderEveryWaitPolicy(t *testing.T) {
	t.Parallel()
	nodes, key := splitVote(t)
	ctx := context.Background()
	for _, tc := range []struct {
		wait     Wait
		min, max func(delay time.Duration) time.Duration // bounds of pause(0, delay)
	}{
		{Wait{Kind: WaitSpin}, // spin:0 alone would retry at once
			func(d time.Duration) time.Duration { return d },
			func(d time.Duration) time.Duration { return d }},
		{Wait{Kind: WaitBackoff, Min: time.Millisecond, Max: time.Millisecond},
			func(d time.Duration) time.Duration { return d + time.Millisecond/2 },
			func(d time.Duration) time.Duration { return d + time.Millisecond }},
		{Wait{Kind: WaitPubSub},
			func(d time.Duration) time.Duration { return d + time.Millisecond },
			func(d time.Duration) time.Duration { return d + time.Millisecond }},
	} {
		t.Run(tc.wait.String(), func(t *testing.T) {
			// A node timing out would make the round a refusal, not a split: the default
			// (ttl/20, 500ms here) is within reach of a busy machine.
			s, err := New("redlock", Options{Nodes: nodes, Params: Params{Wait: tc.wait, NodeTimeout: 10 * time.Second}})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			r := s.(*redlock)

			l, delay, err := r.attempt(ctx, key, "a")
			if l != nil || err != nil {
				t.Fatalf("split round: lease %v, error %v; want neither", l, err)
			}
			if delay < time.Millisecond || delay >= time.Millisecond+maxSplitVoteSpread {
				t.Fatalf("split round's retry delay %s, want in [1ms, %s)", delay, time.Millisecond+maxSplitVoteSpread)
			}
			if n, _ := nodes[1].Do(ctx, nodes[1].B().Exists().Key(key).Build()).AsInt64(); n != 0 {
				t.Fatal("the split round's grant on node 1 was not undone")
			}
			for n := range 3 {
				if p := r.pause(n, delay); p < tc.min(delay) || (n == 0 && p > tc.max(delay)) {
					t.Fatalf("pause before retry %d after a split vote: %s, want %s..%s", n, p, tc.min(delay), tc.max(delay))
				}
			}

			// Every node refuses: the lock is held, no split; the policy alone decides.
			other := key + ":held"
			for _, c := range nodes {
				if err := c.Do(ctx, c.B().Set().Key(other).Value("x").PxMilliseconds(time.Minute.Milliseconds()).Build()).Error(); err != nil {
					t.Fatal(err)
				}
			}
			if l, delay, err := r.attempt(ctx, other, "a"); l != nil || err != nil || delay != 0 {
				t.Fatalf("refused round: lease %v, delay %s, error %v; want none", l, delay, err)
			}
			if tc.wait.Kind == WaitSpin {
				if p := r.pause(0, 0); p != 0 {
					t.Fatalf("spin:0 after a refused round pauses %s, want 0", p)
				}
			}
		})
	}
}

// splitVoteDelay is random, at least 1ms, and its spread stays within [5ms, 50ms] whatever
// the round's elapsed time says (a clock jump can make it negative or huge).
func TestSplitVoteDelayIsRandomAndBounded(t *testing.T) {
	for _, elapsed := range []time.Duration{-time.Second, 0, time.Millisecond, 10 * time.Millisecond, time.Hour} {
		spread := min(max(2*elapsed, minSplitVoteSpread), maxSplitVoteSpread)
		seen := make(map[time.Duration]bool)
		for range 100 {
			d := splitVoteDelay(elapsed)
			if d < time.Millisecond || d >= time.Millisecond+spread {
				t.Fatalf("splitVoteDelay(%s) = %s, want in [1ms, %s)", elapsed, d, time.Millisecond+spread)
			}
			seen[d] = true
		}
		if len(seen) < 50 { // 100 draws over >= 5ms in ns: collisions are vanishingly rare
			t.Fatalf("splitVoteDelay(%s): %d distinct values in 100 draws; it must be random", elapsed, len(seen))
		}
	}
}

// End to end through the wait loop: with spin:0, a contender facing a lasting split vote
// still pauses at least 1ms per round, so over a window it makes at most window/1ms + 1
// rounds, however fast Redis answers. (Without the delay it would retry at once, as many
// rounds as round trips allow. A slow machine only lowers the count: this cannot flake.)
func TestRedlockSpinDoesNotHammerASplitVote(t *testing.T) {
	t.Parallel()
	nodes, key := splitVote(t)
	s, err := New("redlock", Options{Nodes: nodes, Params: Params{Wait: Wait{Kind: WaitSpin}}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const window = 200 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), window)
	defer cancel()
	if l, err := s.Acquire(ctx, key, "a"); err == nil {
		_ = l.Release(context.Background())
		t.Fatal("acquired a lock two others split")
	}
	if n, most := s.Stats().FailedAttempts, uint64(window/time.Millisecond)+1; n > most {
		t.Fatalf("%d failed rounds in %s with spin:0; the split-vote delay allows at most %d", n, window, most)
	}
}
