package redis_test

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/redistest"
	"github.com/lockbench/lockbench/services"
	"github.com/lockbench/lockbench/services/redis"
	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/workload"
)

// runHelper is the helper mode "run": a run as `lockbench run --redis HELPER_REDIS
// --strategy HELPER_STRATEGY` makes it (the Redis flags' Open, the engine), for a minute,
// under the key prefix HELPER_PREFIX. It prints "running" once a second of its window has
// passed (its keys are written by then) and waits to be killed.
//
// Eight workers on two keys, each hold 20ms: every key is held and has three waiters at
// every moment (redisson-fair's queue, a semaphore's permits, fenced's counter are all
// written), at some 100 acquires a second. No warm-up: the window starts with the first
// acquire. (With 2ms holds after a 1s warm-up, the 18 children spent some 30 CPU-seconds
// under the race detector acquiring as fast as they could, for keys that are written in
// the first few cycles.)
func runHelper() int {
	addrs, strategy, prefix := os.Getenv("HELPER_REDIS"), os.Getenv("HELPER_STRATEGY"), os.Getenv("HELPER_PREFIX")
	ctx := context.Background()
	f := &redis.Flags{Redis: addrs, ConnectTimeout: 10 * time.Second}
	c := workload.Config{Base: workload.Base{Load: workload.Load{Workers: 8, Keys: 2}, Lock: workload.Lock{TTL: strategies.TTLOf(10 * time.Second)}}}
	ph := c.Phase(strategy)
	var h workload.Hold
	_ = h.Set("20ms")
	ph.Hold = h
	conn, err := f.Open(ctx, services.Need{Phases: []workload.Phase{ph}, ConnectTimeout: 10 * time.Second})
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	defer conn.Close()
	cfg := workload.Config{Phases: []workload.Phase{ph}, Duration: time.Minute, Warmup: -1, AcquireTimeout: 5 * time.Second, KeyPrefix: prefix}
	var once sync.Once
	_, err = workload.Run(ctx, cfg, conn, workload.Options{Progress: func(p workload.Progress) {
		if !p.Warmup {
			once.Do(func() { fmt.Println("running") })
		}
	}})
	fmt.Println("error: the run ended:", err)
	return 1
}

// After `kill -9` of a run of every Redis strategy of the lock core on an external Redis, the next run
// removes what it left: no key under the killed run's prefix is left without a ttl
// (redisson-fair's queue and timeout set, the semaphores, getset's lock, fenced's counter
// were before), nor any key whose name holds the prefix further in (redisson-fair's
// redisson_lock_queue:PREFIX{0}). The test lists the keys left on failure.
func TestNextRunRemovesWhatAKilledRunLeft(t *testing.T) {
	redistest.Require(t)
	if testing.Short() {
		t.Skip("starts a child run per strategy")
	}
	servers := redistest.Start(t, 3)
	addrs := []string{servers[0].Addr, servers[1].Addr, servers[2].Addr}
	clients := redistest.Client(t, servers[0].Addr)
	var names []string
	for _, n := range strategies.Names() {
		if info, _ := strategies.Lookup(n); info.Service == "" {
			names = append(names, n)
		}
	}
	sem := make(chan struct{}, 3) // children at once, on a machine of two shared cores
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			sem <- struct{}{}
			defer func() { <-sem }()
			info, _ := strategies.Lookup(name)
			target := addrs[0]
			if info.MultiNode {
				target = strings.Join(addrs, ",")
			}
			prefix := fmt.Sprintf("lockbench:kill%08x:", rand.Uint32())
			killedRun(t, target, name, prefix)

			// The next run: its Open sweeps the registry.
			f := &redis.Flags{Redis: target, ConnectTimeout: 10 * time.Second}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			conn, err := f.Open(ctx, services.Need{ConnectTimeout: 10 * time.Second})
			if err != nil {
				t.Fatalf("the next run's Open: %v", err)
			}
			conn.Close()

			var left []string
			for _, s := range servers {
				c := redistest.Client(t, s.Addr)
				// A strategy's derived keys may put a name before the lock's
				// (redisson-fair's redisson_lock_queue:PREFIX...): every key naming the prefix.
				keys, err := c.Do(ctx, c.B().Keys().Pattern("*"+prefix+"*").Build()).AsStrSlice()
				if err != nil {
					t.Fatal(err)
				}
				for _, k := range keys {
					ttl, err := c.Do(ctx, c.B().Pttl().Key(k).Build()).AsInt64()
					if err == nil && ttl == -1 {
						left = append(left, s.Addr+" "+k)
					}
				}
			}
			if len(left) > 0 {
				t.Errorf("%s killed with SIGKILL: after the next run, %d key(s) under %s have no ttl:\n  %s", name, len(left), prefix, strings.Join(left, "\n  "))
			}
		})
	}
	t.Cleanup(func() {
		// The registry itself expires: a key a run writes must not stay forever.
		if ttl, err := clients.Do(context.Background(), clients.B().Pttl().Key(redis.RunsKey).Build()).AsInt64(); err == nil && ttl == -1 {
			t.Errorf("%s has no ttl", redis.RunsKey)
		}
	})
}

// killedRun starts a run of strategy as a child process, waits until its window runs and
// kills it with SIGKILL.
func killedRun(t *testing.T, target, strategy, prefix string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"=run", "HELPER_REDIS="+target, "HELPER_STRATEGY="+strategy, "HELPER_PREFIX="+prefix)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		if sc.Scan() {
			line <- sc.Text()
		}
		close(line)
	}()
	select {
	case l := <-line:
		if l != "running" {
			t.Fatalf("the run of %s: %q", strategy, l)
		}
	case <-time.After(2 * time.Minute):
		t.Fatalf("the run of %s did not start within 2 minutes", strategy)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
}
