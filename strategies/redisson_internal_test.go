package strategies

import (
	"testing"
	"time"
)

// TestRedissonBackoff: RedissonSpinLock's default ExponentialBackOff sleeps 1ms first, then
// twice the last sleep plus 0..fails-1 ms of jitter, never more than 128ms.
func TestRedissonBackoff(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		n        int
		prev     time.Duration
		min, max time.Duration
	}{
		{0, 0, 1 * ms, 1 * ms},
		{1, 1 * ms, 2 * ms, 2 * ms},       // nextInt(1) is 0
		{2, 2 * ms, 4 * ms, 5 * ms},       // + 0..1ms
		{5, 20 * ms, 40 * ms, 44 * ms},    // + 0..4ms
		{6, 100 * ms, 128 * ms, 128 * ms}, // capped
		{9, 128 * ms, 128 * ms, 128 * ms}, // stays at the cap
	} {
		for range 50 {
			if got := redissonBackoff(tc.n, tc.prev); got < tc.min || got > tc.max {
				t.Fatalf("redissonBackoff(%d, %s) = %s, want %s..%s", tc.n, tc.prev, got, tc.min, tc.max)
			}
		}
	}
}
