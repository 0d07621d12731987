package libs_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bsm/redislock"
	"github.com/go-redsync/redsync/v4"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"
	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"
	"github.com/redis/rueidis/rueidislock"

	redisservice "github.com/lockbench/lockbench/services/redis"
	"github.com/lockbench/lockbench/workload"
)

// direct is a library driven the way its README shows, without lockbench: the minimal
// program the adapters are held against. lock takes key, waiting as the library does
// until ctx ends or it gives up, and returns the unlock; ok false when not acquired.
type direct struct {
	lock  func(ctx context.Context, key string) (unlock func(), ok bool)
	close func()
}

// newDirect makes the named library's direct driver on addr with a ttl.
func newDirect(t testing.TB, name, addr string, ttl time.Duration) direct {
	t.Helper()
	switch name {
	case "redsync":
		c := redis.NewClient(&redis.Options{Addr: addr})
		rs := redsync.New(goredis.NewPool(c))
		return direct{close: func() { c.Close() }, lock: func(ctx context.Context, key string) (func(), bool) {
			m := rs.NewMutex(key, redsync.WithExpiry(ttl))
			if m.LockContext(ctx) != nil {
				return nil, false
			}
			return func() { m.UnlockContext(context.Background()) }, true
		}}
	case "redislock", "redislock-linear":
		c := redis.NewClient(&redis.Options{Addr: addr})
		locker := redislock.New(c)
		var opt *redislock.Options
		if name == "redislock-linear" {
			opt = &redislock.Options{RetryStrategy: redislock.LinearBackoff(100 * time.Millisecond)}
		}
		return direct{close: func() { c.Close() }, lock: func(ctx context.Context, key string) (func(), bool) {
			l, err := locker.Obtain(ctx, key, ttl, opt)
			if err != nil {
				return nil, false
			}
			return func() { l.Release(context.Background()) }, true
		}}
	case "rueidislock", "rueidislock-readme":
		opt := rueidislock.LockerOption{ClientOption: rueidis.ClientOption{InitAddress: []string{addr}}, KeyValidity: ttl}
		if name == "rueidislock-readme" {
			opt.KeyMajority, opt.NoLoopTracking = 1, true
		}
		locker, err := rueidislock.NewLocker(opt)
		if err != nil {
			t.Fatal(err)
		}
		return direct{close: locker.Close, lock: func(ctx context.Context, key string) (func(), bool) {
			_, cancel, err := locker.WithContext(ctx, key)
			if err != nil {
				return nil, false
			}
			return cancel, true
		}}
	}
	t.Fatalf("no direct driver for %s", name)
	return direct{}
}

// The run's figures for a library agree with those of the minimal program that drives the
// library directly the same way (20 workers on one key, holds of 1ms, a fresh attempt as soon
// as one gives up): acquires per second and Redis commands per acquire, each as the ratio
// adapter/direct within one test, with generous bounds for a shared, noisy machine. An
// adapter that added commands, retried on its own or serialized the workers would fall out.
func TestFiguresAgreeWithDirectUse(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector slows the engine, not the direct program: the figures cannot agree")
	}
	conn := spawn(t, "single")
	const workers, window = 20, 1500 * time.Millisecond
	for _, name := range []string{"redsync", "redislock", "redislock-linear", "rueidislock", "rueidislock-readme"} {
		t.Run(name, func(t *testing.T) {
			ph := phase(name, func(ph *workload.Phase) { ph.Workers = workers })
			r := run(t, conn, config(window, ph))[0]
			rate, cmds := drive(t, conn, name, workers, max(r.Acquired, 100), ph.TTL.Duration())
			t.Logf("%s: run %.0f/s %.1f cmd/acq; direct %.0f/s %.1f cmd/acq", name, r.AcquireRate, r.Redis.CommandsPerAcquire, rate, cmds)
			if q := r.AcquireRate / rate; q < 0.5 || q > 2 {
				t.Errorf("acquires/s: run %.0f, direct %.0f (ratio %.2f), want within 0.5..2", r.AcquireRate, rate, q)
			}
			if q := r.Redis.CommandsPerAcquire / cmds; q < 0.5 || q > 2 {
				t.Errorf("commands per acquire: run %.1f, direct %.1f (ratio %.2f), want within 0.5..2", r.Redis.CommandsPerAcquire, cmds, q)
			}
		})
	}
}

// drive runs the direct program: workers goroutines lock one key, hold it 1ms (spinning, as
// the engine's holds end), unlock, and go again, warmed up until each worker could have
// acquired once, then measured over n acquires (the run's count: a window of about the
// run's length, however busy the machine), at most a minute. It returns the acquires per
// second and the Redis commands per acquire of the window.
func drive(t *testing.T, conn *redisservice.Conn, name string, workers int, n uint64, ttl time.Duration) (rate, cmdsPerAcq float64) {
	t.Helper()
	d := newDirect(t, name, conn.Addrs[0], ttl)
	defer d.close()
	key := "direct:" + name + ":" + time.Now().Format("150405.000000")
	var acquired atomic.Uint64
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for ctx.Err() == nil {
				// rueidislock's lock lives in a context derived from the one its acquire
				// gets: that one must outlive the hold.
				actx, cancel := context.WithTimeout(ctx, 2*time.Second)
				unlock, ok := d.lock(actx, key)
				if ok {
					for end := time.Now().Add(time.Millisecond); time.Now().Before(end); {
					}
					acquired.Add(1)
					unlock()
				}
				cancel()
			}
		})
	}
	reach := func(count uint64) { // polls until count acquires, or a minute
		for deadline := time.Now().Add(time.Minute); acquired.Load() < count && time.Now().Before(deadline); {
			time.Sleep(5 * time.Millisecond)
		}
	}
	reach(uint64(workers)) // the warm-up
	nodes := redisservice.Nodes(conn.Client)
	before, err := redisservice.Snapshot(ctx, nodes)
	if err != nil {
		t.Fatal(err)
	}
	n0, t0 := acquired.Load(), time.Now()
	reach(n0 + n)
	after, err := redisservice.Snapshot(ctx, nodes)
	n1, t1 := acquired.Load(), time.Now()
	stop()
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	got := float64(n1 - n0)
	if got == 0 {
		t.Fatalf("direct %s: nothing acquired", name)
	}
	return got / t1.Sub(t0).Seconds(), float64(redisservice.CostBetween(before, after).Commands) / got
}
