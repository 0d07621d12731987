package strategies_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/lockbench/lockbench/strategies"
)

// BenchmarkAcquireRelease measures one uncontended acquire+release per strategy against a
// local redis-server: the per-lock cost of the client side, round trips included. Keys rotate
// over a fixed set built beforehand, so key building is not measured. b.N iterations run
// from RunParallel goroutines to keep rueidis's pipeline as busy as the engine keeps it.
func BenchmarkAcquireRelease(b *testing.B) {
	for _, name := range strategies.Names() {
		b.Run(name, func(b *testing.B) {
			e := newBenchEnv(b, name)
			s, err := strategies.New(name, e)
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			keys := make([]string, 4096)
			for i := range keys {
				keys[i] = "bench:" + name + ":" + strconv.Itoa(i)
			}
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				owner := "bench-" + strconv.Itoa(int(nextWorker.Add(1)))
				i := int(nextWorker.Load()) * 997
				for pb.Next() {
					i++
					l, err := s.Acquire(ctx, keys[i%len(keys)], owner)
					if err != nil {
						b.Error(err)
						return
					}
					if err := l.Release(ctx); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// BenchmarkHotKeyPubSub measures the handoff chain of one process on one hot key under the
// pubsub wait policy: 8 goroutines per CPU take turns on a single key with no hold, so each
// op is one release handing the lock to a waiter of the same process (scripts/bench.sh's
// "hot key notified" row without the hold).
func BenchmarkHotKeyPubSub(b *testing.B) {
	e := newBenchEnv(b, "token")
	e.Wait = strategies.Wait{Kind: strategies.WaitPubSub}
	s, err := strategies.New("token", e)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	b.ReportAllocs()
	b.SetParallelism(8)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		owner := "bench-" + strconv.Itoa(int(nextWorker.Add(1)))
		for pb.Next() {
			l, err := s.Acquire(ctx, "bench:hot", owner)
			if err != nil {
				b.Error(err)
				return
			}
			if err := l.Release(ctx); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
