//go:build !race

// The race detector doubles the stack guard and widens every frame, so a worker's stack
// is measured without it.

package workload

import (
	"context"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/redistest"
)

// A cycling worker stays on the 4 KiB stack it parked on (see parkFrame): token's deepest
// wait, rueidis's select on a reply under the acquire's frames, fits 4 KiB. A frame that
// grows under it (base.wait held 544 bytes there) puts every worker of a large fleet on 8
// KiB: 100,000 workers' stacks went from 391 to 800 MiB, and copying them cost a third of
// the run's CPU. The same under --wait pubsub, on many keys for long enough that workers
// subscribe, wait and are handed locks: with the registration's frame (waitNotified) under
// the pauses' loop, 3,000 workers peaked at 10.3 KiB a worker, and the bench's 10,000-worker
// scale row at 242 MiB. Not parallel: the stacks measured are the process's.
//
// The other pubsub strategies' acquires ran their scripts under frames of 300-1,200 bytes
// (fair's loop of 736, the attempts' closures, rueidis's Lua.Exec): nearly every worker of
// fair, fenced and redisson-lock grew to 8 KiB, 3,000 workers peaking at 27-31 MiB here
// (16-20 MiB since; redisson-lock's the highest, as it also deletes each unlock latch in a
// goroutine of its own, about 550 at once here, on 4 KiB each).
func TestCyclingWorkersKeepTheirStacks(t *testing.T) {
	for _, c := range []struct{ strategy, wait string }{
		{"token", "native"}, {"token", "pubsub"},
		{"fair", "pubsub"}, {"fenced", "pubsub"}, {"redisson-lock", "pubsub"},
	} {
		t.Run(c.strategy+"/"+c.wait, func(t *testing.T) { cyclingWorkersKeepTheirStacks(t, c.strategy, c.wait) })
	}
}

func cyclingWorkersKeepTheirStacks(t *testing.T, strategy, wait string) {
	_, c := redistest.Server(t)
	const workers = 3000
	cfg := shortConfig(strategy)
	// Contended keys: most acquires fail and retry, through both the first attempt and the
	// pauses' loop, and wait in the client's queue.
	cfg.Workers, cfg.Keys, cfg.Duration, cfg.Warmup = workers, 100, 500*time.Millisecond, -1
	switch {
	case wait == "pubsub" && strategy == "token":
		cfg.Keys, cfg.Duration = 1000, 3*time.Second
	case wait == "pubsub":
		cfg.Keys, cfg.Duration = 1000, 2*time.Second
	}
	if err := cfg.Wait.Set(wait); err != nil {
		t.Fatal(err)
	}
	sample := []metrics.Sample{{Name: "/memory/classes/heap/stacks:bytes"}}
	var peak uint64
	stop := make(chan struct{})
	var sampler sync.WaitGroup
	sampler.Go(func() {
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				metrics.Read(sample)
				peak = max(peak, sample[0].Value.Uint64())
			}
		}
	})
	results, err := Run(context.Background(), cfg, redisBackend(c), Options{})
	close(stop)
	sampler.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 1 || results[0].Acquired == 0 {
		t.Fatalf("want a run that acquired, got %+v", results)
	}
	// 4 KiB a worker, plus the rest of the process; 8 KiB a worker is over the limit. Under
	// pubsub the process also subscribes each key's channel once, in a goroutine of its own
	// that lives as long as its SUBSCRIBE and ends on 4 KiB: up to a key's 4 KiB more (780
	// of the 1,000 keys at once here, the start's peak). Their stacks are the keys', not the
	// workers': the limit allows them. A wait under a frame the worker's 4 KiB does not hold
	// grows some workers anyway, when the runtime's own frames under it go deep (a select
	// allocating, a lock contended): in 2026-11 about 260 of the 3,000 here, 800 before the
	// release's frames were cut (the CI run that failed peaked at 18,688 KiB against 18,000).
	limit := uint64(workers * 6 << 10)
	if wait == "pubsub" {
		limit += uint64(cfg.Keys * 4 << 10)
	}
	if peak > limit {
		t.Errorf("stacks peaked at %d KiB for %d cycling workers (%.1f KiB a worker), want under %d KiB: a frame under the acquire's wait grew the workers' stacks past 4 KiB",
			peak>>10, workers, float64(peak)/workers/1024, limit>>10)
	}
	t.Logf("stacks peaked at %d KiB (%.1f KiB a worker)", peak>>10, float64(peak)/workers/1024)
}
