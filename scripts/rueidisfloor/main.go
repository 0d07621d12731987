// Command rueidisfloor is the least a rueidis client can spend on the spread's lock cycle:
// every worker loops SET key token NX PX ttl on a random key and, when it got the lock,
// EVALSHA of a compare-and-delete script — the token lock's two round trips with nothing
// of lockbench around them (no oracle, no histograms, no acquire context, no backoff: a
// refused SET just tries another key). It prints the cycles per second and the CPU each
// cycle cost the client (getrusage of this process over the measured window) and the
// server (INFO cpu's used_cpu_user + used_cpu_sys over the same window).
//
// It is the yardstick for issue 32's line "client CPU per acquire ≤ the server's": what
// lockbench's spread row costs above this loop is lockbench's; what this loop costs is
// the price of the fixed choices (rueidis, one goroutine per worker). scripts/bench.sh runs
// it in every spread round, with the spread's workers, keys and durations, on the same
// server; by hand: go run ./scripts/rueidisfloor -addr 127.0.0.1:PORT.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/rueidis"

	"github.com/lockbench/lockbench/services/redis/server"
)

const unlock = `if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) else return 0 end`

func main() {
	addr := flag.String("addr", "127.0.0.1:6379", "the Redis server to load (loopback only)")
	workers := flag.Int("workers", 1000, "goroutines, one lock cycle at a time each")
	keys := flag.Int("keys", 100000, "keys the workers pick from at random")
	warmup := flag.Duration("warmup", time.Second, "unmeasured time before the window")
	d := flag.Duration("d", 5*time.Second, "the measured window")
	opts := flag.String("opts", "lockbench", "rueidis options: lockbench (services/redis/server.ClientOption: one pipelined connection, a flush delay) or default (rueidis's)")
	profile := flag.String("cpuprofile", "", "write a CPU profile of the run here")
	asJSON := flag.Bool("json", false, "print the figures as one JSON object (scripts/bench.sh reads it)")
	flag.Parse()
	if *profile != "" {
		f, err := os.Create(*profile)
		if err == nil {
			defer f.Close()
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "rueidisfloor:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	if err := check(*addr, *workers, *keys, *warmup, *d, *opts); err != nil {
		fmt.Fprintln(os.Stderr, "rueidisfloor:", err)
		os.Exit(2)
	}
	if err := run(*addr, *workers, *keys, *warmup, *d, *opts, *asJSON); err != nil {
		fmt.Fprintln(os.Stderr, "rueidisfloor:", err)
		pprof.StopCPUProfile()
		os.Exit(1)
	}
}

// check refuses bad flags before anything connects (exit 2).
func check(addr string, workers, keys int, warmup, d time.Duration, opts string) error {
	switch {
	case !strings.HasPrefix(addr, "127.0.0.1:") && !strings.HasPrefix(addr, "localhost:"):
		return fmt.Errorf("-addr %s: loopback only (127.0.0.1:PORT or localhost:PORT)", addr)
	case workers < 1 || keys < 1:
		return fmt.Errorf("-workers %d, -keys %d: both must be at least 1", workers, keys)
	case warmup < 0 || d <= 0:
		return fmt.Errorf("-warmup %s, -d %s: the warm-up must not be negative, the window must be positive", warmup, d)
	case opts != "lockbench" && opts != "default":
		return fmt.Errorf("-opts %q: want lockbench or default", opts)
	}
	return nil
}

func run(addr string, workers, keys int, warmup, d time.Duration, opts string, asJSON bool) error {
	// lockbench's own options (services/redis/server), so that the floor follows them.
	o := server.ClientOption(addr)
	if opts == "default" {
		o = rueidis.ClientOption{InitAddress: []string{addr}, DisableCache: true}
	}
	c, err := rueidis.NewClient(o)
	if err != nil {
		return err
	}
	defer c.Close()
	admin, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{addr}, DisableCache: true})
	if err != nil {
		return err
	}
	defer admin.Close()
	script := rueidis.NewLuaScript(unlock)

	ctx, cancel := context.WithTimeout(context.Background(), warmup+d+10*time.Second)
	defer cancel()
	var cycles, refused, failed atomic.Uint64
	var stop atomic.Bool
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			tok := "floor-" + strconv.Itoa(w)
			for !stop.Load() {
				key := "floor:" + strconv.Itoa(rand.IntN(keys))
				err := c.Do(ctx, c.B().Set().Key(key).Value(tok).Nx().PxMilliseconds(10000).Build()).Error()
				if rueidis.IsRedisNil(err) {
					refused.Add(1)
					continue
				}
				if err != nil || script.Exec(ctx, c, []string{key}, []string{tok}).Error() != nil {
					failed.Add(1)
					if ctx.Err() != nil {
						return
					}
					continue
				}
				cycles.Add(1)
			}
		})
	}
	defer func() { stop.Store(true); wg.Wait() }() // on every return: no worker outlives run
	time.Sleep(warmup)
	r0, err := rusage()
	if err != nil {
		return err
	}
	c0, t0 := cycles.Load(), time.Now()
	s0, err := serverCPU(ctx, admin)
	if err != nil {
		return err
	}
	time.Sleep(d)
	s1, err := serverCPU(ctx, admin)
	if err != nil {
		return err
	}
	c1, t1 := cycles.Load(), time.Now()
	r1, err := rusage()
	if err != nil {
		return err
	}
	stop.Store(true)
	wg.Wait()
	n := float64(c1 - c0)
	if n == 0 {
		return fmt.Errorf("no cycle in the window (%d failed)", failed.Load())
	}
	f := figures{
		Opts: opts, Workers: workers, Keys: keys, GOMAXPROCS: runtime.GOMAXPROCS(0),
		CyclesPerS:       n / t1.Sub(t0).Seconds(),
		ClientUSPerCycle: (r1 - r0).Seconds() * 1e6 / n,
		RedisUSPerCycle:  (s1 - s0) * 1e6 / n,
		Refused:          refused.Load(), Failed: failed.Load(),
	}
	if asJSON {
		return json.NewEncoder(os.Stdout).Encode(f)
	}
	fmt.Printf("rueidisfloor opts=%s workers=%d keys=%d GOMAXPROCS=%d: %.0f cycles/s, client %.2f µs/cycle, redis %.2f µs/cycle, refused %d, failed %d\n",
		f.Opts, f.Workers, f.Keys, f.GOMAXPROCS, f.CyclesPerS, f.ClientUSPerCycle, f.RedisUSPerCycle, f.Refused, f.Failed)
	return nil
}

// figures are one run's: cycles (a SET NX that took the key, then the script that freed it)
// per second of the measured window, and the CPU per cycle of each side.
type figures struct {
	Opts             string  `json:"opts"`
	Workers          int     `json:"workers"`
	Keys             int     `json:"keys"`
	GOMAXPROCS       int     `json:"gomaxprocs"`
	CyclesPerS       float64 `json:"cycles_per_s"`
	ClientUSPerCycle float64 `json:"client_cpu_us_per_cycle"`
	RedisUSPerCycle  float64 `json:"redis_cpu_us_per_cycle"`
	Refused          uint64  `json:"refused"`
	Failed           uint64  `json:"failed"`
}

// serverCPU is the server's used_cpu_user + used_cpu_sys, seconds.
func serverCPU(ctx context.Context, c rueidis.Client) (float64, error) {
	info, err := c.Do(ctx, c.B().Info().Section("cpu").Build()).ToString()
	if err != nil {
		return 0, err
	}
	var sum float64
	for line := range strings.SplitSeq(info, "\r\n") {
		k, v, ok := strings.Cut(line, ":")
		if ok && (k == "used_cpu_user" || k == "used_cpu_sys") {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return 0, fmt.Errorf("INFO cpu %s: %w", k, err)
			}
			sum += f
		}
	}
	return sum, nil
}
