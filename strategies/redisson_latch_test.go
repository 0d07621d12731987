package strategies_test

import (
	"context"
	"testing"

	"github.com/lockbench/lockbench/internal/redistest"
	"github.com/lockbench/lockbench/strategies"
)

// TestRedissonUnlockLatch counts the commands of one uncontended acquire and release of each
// Redisson lock on its own Redis (INFO commandstats, which counts the commands a script runs
// too): since Redisson 3.24 every unlock script GETs and SETs the unlock latch
// redisson_unlock_latch:{name}:<requestId>, and the client DELs it afterwards, so that an RLock
// cycle is 12 commands (redisson-4.7.0), a spin-lock cycle 11. The latch is gone afterwards.
func TestRedissonUnlockLatch(t *testing.T) {
	for _, tc := range []struct {
		name   string
		shared bool
		want   int64 // EVALSHAs, the scripts' commands, the latch's DEL
	}{
		// acquire: EVALSHA exists hincrby pexpire; unlock: EVALSHA get hexists hincrby del
		// publish set; DEL.
		{"redisson-lock", false, 12},
		// the same without publish
		{"spin-lock", false, 11},
		// acquire: EVALSHA lindex exists exists lpop zrem zrange hset pexpire; unlock: EVALSHA
		// get lindex exists hexists hincrby del set lindex; DEL.
		{"redisson-fair", false, 19},
		// acquire: EVALSHA hget hset hset pexpire; unlock: EVALSHA get hget hexists hincrby
		// hdel hlen del publish set; DEL.
		{"rw-lock", false, 16},
		// acquire: EVALSHA hget hset hset set pexpire pexpire; unlock: EVALSHA get hget
		// hexists hincrby hdel del hlen del publish set; DEL.
		{"rw-lock", true, 19},
	} {
		name := tc.name
		if tc.shared {
			name += "/read"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, tc.name)
			s := e.strategy(t, withTTL(patience))
			key := redistest.Prefix(t) + "k"
			cycle := func() {
				var l strategies.Lease
				if tc.shared {
					var err error
					l, err = s.(strategies.SharedLocker).AcquireShared(context.Background(), key, "a")
					if err != nil {
						t.Fatal(err)
					}
				} else {
					l = acquire(t, s, key, "a")
				}
				release(t, l)
			}
			cycle() // loads the scripts: the counted cycle runs EVALSHA only
			latchGone := func() bool {
				left, err := e.client.Do(context.Background(), e.client.B().Keys().Pattern("redisson_unlock_latch:*").Build()).AsStrSlice()
				return err == nil && len(left) == 0
			}
			pollUntil(t, "the first cycle's latch DEL", latchGone)
			if err := e.client.Do(context.Background(), e.client.B().ConfigResetstat().Build()).Error(); err != nil {
				t.Fatal(err)
			}
			cycle()
			pollUntil(t, "the latch DEL", latchGone)
			calls := strategies.CommandCalls(t, e.client)
			var total int64
			for cmd, n := range calls {
				if cmd != "info" && cmd != "config|resetstat" && cmd != "keys" {
					total += n
				}
			}
			if total != tc.want {
				t.Errorf("one cycle ran %d commands %v, want %d (Redisson's, unlock latch included)", total, calls, tc.want)
			}
			sets := int64(1) // the latch's
			if tc.shared {
				sets++ // the read hold's timeout key
			}
			if calls["get"] != 1 || calls["set"] != sets {
				t.Errorf("one cycle: %d GETs and %d SETs, want the unlock latch's GET and %d SETs", calls["get"], calls["set"], sets)
			}
		})
	}
}
