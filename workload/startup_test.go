package workload

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/redistest"
)

// startOnly is a phase with what starting its workers needs: no strategy, as its workers
// end before their first cycle.
func startOnly(workers int) *phase {
	return &phase{ph: Phase{Base: Base{Load: Load{Workers: workers, Keys: 10000, LockSet: 1}}}, cfg: &Config{}, state: make([]keyState, 10000), seed: 1}
}

// BenchmarkStartWorkers is what one worker costs to start, park and end: its goroutine and
// its state.
func BenchmarkStartWorkers(b *testing.B) {
	b.ReportAllocs()
	p := startOnly(b.N)
	work, stop := context.WithCancel(context.Background())
	kill, killAll := context.WithCancel(context.Background())
	defer killAll()
	var workers sync.WaitGroup
	release, err := p.startWorkers(context.Background(), work, kill, &workers, func(StartUp) {})
	if err != nil {
		b.Fatal(err)
	}
	stop()
	release()
	workers.Wait()
}

// Every worker is started — its goroutine and state made, parked — before the phase's clock
// starts: the start-up's last report counts them all, and comes before any report of the
// warm-up or the window. A large fleet's start-up then takes nothing from either.
func TestWorkersStartBeforeTheWarmup(t *testing.T) {
	t.Parallel()
	_, c := redistest.Server(t)
	for _, open := range []bool{false, true} {
		cfg := shortConfig("token")
		cfg.Workers, cfg.Keys, cfg.Duration, cfg.Warmup = 3000, 100, MinDuration, 100*time.Millisecond
		if open {
			cfg.Rate = 1000
		}
		var (
			mu       sync.Mutex
			last     *StartUp
			reports  int
			measured bool // a warm-up or window report came
			order    []string
		)
		o := Options{
			StartUp: func(s StartUp) {
				mu.Lock()
				defer mu.Unlock()
				reports++
				last = &s
				if measured {
					order = append(order, "a start-up report after the warm-up began")
				}
			},
			Progress: func(Progress) {
				mu.Lock()
				defer mu.Unlock()
				measured = true
			},
		}
		_, err := Run(context.Background(), cfg, redisBackend(c), o)
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		if last == nil || !last.Done || last.Started != 3000 || last.Workers != 3000 || last.Strategy != "token" {
			t.Errorf("open=%v: last start-up report %+v: want 3000 of 3000 workers started, done", open, last)
		}
		if len(order) > 0 {
			t.Errorf("open=%v: %v", open, order)
		}
		mu.Unlock()
	}
}
