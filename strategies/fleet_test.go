package strategies_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/lockbench/lockbench/internal/redistest"
	"github.com/lockbench/lockbench/strategies"
)

// fleet is a hot key shared by procs "processes": each its own rueidis client and its own
// strategy instance (so its own notifier and local queue), as separate lockbench processes
// have, with workers goroutines each holding the lock for hold. It runs until the fleet made
// total acquires (or a generous deadline passes) and reports each process's count and what
// Redis ran meanwhile (INFO total_commands_processed on the test's own server).
type fleetResult struct {
	acquired []int64
	commands int64
	messages uint64 // wake-up messages the processes received (Stats.Notifications)
	order    []int  // the process of each acquire, in the order the lock was held
}

// runs are the lengths of the stretches in which one process held the lock again and again.
func (r fleetResult) runs() []int {
	var out []int
	for i, p := range r.order {
		if i > 0 && p == r.order[i-1] {
			out[len(out)-1]++
			continue
		}
		out = append(out, 1)
	}
	return out
}

func (r fleetResult) total() int64 {
	var n int64
	for _, a := range r.acquired {
		n += a
	}
	return n
}

// jain is Jain's fairness index of the per-process counts: 1 when equal, 1/n when one
// process got everything.
func (r fleetResult) jain() float64 {
	var sum, sq float64
	for _, a := range r.acquired {
		sum += float64(a)
		sq += float64(a) * float64(a)
	}
	if sq == 0 {
		return 0
	}
	return sum * sum / (float64(len(r.acquired)) * sq)
}

func (r fleetResult) perAcquire() float64 { return float64(r.commands) / float64(r.total()) }

func runFleet(t *testing.T, name string, procs, workers int, total int64, hold time.Duration) fleetResult {
	t.Helper()
	srv := redistest.Start(t, 1)[0]
	admin := redistest.Client(t, srv.Addr)
	key := redistest.Prefix(t) + "hot"
	ss := make([]strategies.Strategy, procs)
	for p := range ss {
		s, err := strategies.New(name, strategies.Options{
			Client: redistest.Client(t, srv.Addr), // a process of its own: its own connections
			Params: strategies.Params{TTL: strategies.TTLOf(5 * time.Second), Wait: strategies.Wait{Kind: strategies.WaitPubSub}},
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		ss[p] = s
	}

	before := commandsProcessed(t, admin)
	res := fleetResult{acquired: make([]int64, procs)}
	counts := make([]atomic.Int64, procs)
	var made atomic.Int64
	var orderMu sync.Mutex
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	var failed atomic.Value
	for p, s := range ss {
		for w := range workers {
			owner := fmt.Sprintf("p%d-w%d", p, w) // owners are unique across the fleet
			wg.Go(func() {
				for made.Load() < total && ctx.Err() == nil {
					l, err := s.Acquire(ctx, key, owner)
					if err != nil {
						if ctx.Err() == nil {
							failed.Store(err)
						}
						return
					}
					counts[p].Add(1)
					orderMu.Lock() // under the lock: the order is the order of the holds
					res.order = append(res.order, p)
					orderMu.Unlock()
					if made.Add(1) >= total {
						cancel() // the others stop waiting
					}
					time.Sleep(hold)
					if err := l.Release(context.Background()); err != nil {
						failed.Store(err)
						return
					}
				}
			})
		}
	}
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		t.Fatalf("%s fleet: %v", name, err)
	}
	res.commands = commandsProcessed(t, admin) - before - 1 // less our own INFO
	for p := range counts {
		res.acquired[p] = counts[p].Load()
		res.messages += ss[p].Stats().Notifications
	}
	t.Logf("%s, %d processes x %d workers: acquires %v, Jain %.3f, %.2f commands per acquire, %d messages",
		name, procs, workers, res.acquired, res.jain(), res.perAcquire(), res.messages)
	return res
}

func commandsProcessed(t *testing.T, c rueidis.Client) int64 {
	t.Helper()
	info, err := c.Do(context.Background(), c.B().Info().Section("stats").Build()).ToString()
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "total_commands_processed:"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("INFO stats has no total_commands_processed")
	return 0
}

// Four processes of 25 workers on one hot key share it fairly under the pubsub wait policy:
// a release goes to the processes that wait in turn, not to the releaser's own waiters
// (issue 20: before, one process took 5,042 of 5,044 acquires). And it stays cheap: at most
// 8 Redis commands per acquire, counting those the scripts run. redisson-lock's release
// passes the same turns in Redisson's unlock script. (redisson-fair is fair by its queue, at
// about 134 commands per acquire here: too heavy to run beside the rest of the suite.)
func TestFleetSharesAHotKeyFairly(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"token", "fair", "redisson-lock"} {
		t.Run(name, func(t *testing.T) {
			// 480 acquires: 30 turns of turnStreak, enough for checkStreaks' median and for
			// a starved process to show (before issue 20's fix, one took all but two).
			r := runFleet(t, name, 4, 25, 480, time.Millisecond)
			for p, a := range r.acquired {
				if a == 0 {
					t.Errorf("process %d starved: acquires %v", p, r.acquired)
				}
			}
			if j := r.jain(); j < 0.9 {
				t.Errorf("Jain across processes %.3f (acquires %v), want >= 0.9", j, r.acquired)
			}
			if name == "token" && r.perAcquire() > 8 {
				t.Errorf("%.2f Redis commands per acquire, want <= 8", r.perAcquire())
			}
			if name == "token" {
				checkStreaks(t, r)
			}
		})
	}
}

// checkStreaks holds token's turns to their length: a process whose turn it is hands the
// lock to its own next waiter inside the release script turnStreak times in a row at most,
// then the turn moves on (a message to the next process, whose waiter takes the lock with
// SET NX). So the typical stretch of one process holding the lock again and again is
// turnStreak long. A waiter whose timer fired may take a free lock out of turn and start a
// stretch of its own; that is rare, and bounded too.
func checkStreaks(t *testing.T, r fleetResult) {
	t.Helper()
	runs := r.runs()
	if len(runs) < 10 {
		t.Fatalf("only %d stretches in %d acquires: the turn hardly moved between processes", len(runs), len(r.order))
	}
	sorted := slices.Sorted(slices.Values(runs))
	median, longest := sorted[len(sorted)/2], sorted[len(sorted)-1]
	if median != strategies.TurnStreak || longest > 3*strategies.TurnStreak {
		t.Errorf("stretches of one process: median %d, longest %d; want median %d (turnStreak), longest <= %d",
			median, longest, strategies.TurnStreak, 3*strategies.TurnStreak)
	}
}

// One process alone keeps the pipelined local handoff: its release hands the lock to its
// next waiter inside the release script, with no message (the turn is always its own).
// Within a turn a release costs EVALSHA, GET and SET; every turnStreak-th passes the turn
// round to itself (EVALSHA, GET, LMOVE, PEXPIRE, SET): about 3.1 commands per acquire.
func TestSingleProcessHandsOverLocally(t *testing.T) {
	t.Parallel()
	r := runFleet(t, "token", 1, 25, 600, time.Millisecond)
	want := float64(3*(strategies.TurnStreak-1)+5) / strategies.TurnStreak
	if r.perAcquire() > want+0.3 || r.messages != 0 {
		t.Errorf("%.2f commands per acquire and %d messages for one process, want about %.1f and none",
			r.perAcquire(), r.messages, want)
	}
}

// What a waiting process leaves in Redis expires on its own (issue 21 item 15): the list of
// waiting processes of a pubsub lock, and the fair lock's queue. A process that closes takes
// itself out of the list.
func TestWaitingKeysExpire(t *testing.T) {
	t.Parallel()
	for name, derived := range map[string]string{"token": ":pw", "fair": ":q"} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, name)
			s := e.strategy(t, func(o *strategies.Options) {
				o.TTL = strategies.TTLOf(time.Minute)
				o.Wait = strategies.Wait{Kind: strategies.WaitPubSub}
			})
			key := redistest.Prefix(t) + "k"
			list := "{" + key + "}" + derived
			holder := acquire(t, s, key, "holder")
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan error, 1)
			go func() {
				l, err := s.Acquire(ctx, key, "waiter")
				if err == nil {
					err = l.Release(context.Background())
				}
				done <- err
			}()
			c := e.client
			waitFor(t, func() bool {
				n, _ := c.Do(ctx, c.B().Llen().Key(list).Build()).AsInt64()
				return n == 1
			})
			if pttl, err := c.Do(ctx, c.B().Pttl().Key(list).Build()).AsInt64(); err != nil || pttl <= 0 {
				t.Fatalf("PTTL %s = %d, %v while a waiter queues; want a ttl", list, pttl, err)
			}
			release(t, holder)
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if name == "token" {
				_ = s.Close()
				if n, _ := c.Do(ctx, c.B().Exists().Key(list).Build()).AsInt64(); n != 0 {
					t.Fatalf("%s still lists the process after it closed", list)
				}
			}
		})
	}
}

// A process killed while it waited (kill -9: no Close) stays in the list of waiting processes;
// nobody listens on its channel any more, so the release that would give it the turn drops
// it and gives the turn to the next process instead of losing it (the fallback timer is a
// minute away here).
func TestTurnSkipsAProcessThatIsGone(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, 1)[0]
	c := redistest.Client(t, srv.Addr)
	newProc := func() strategies.Strategy {
		s, err := strategies.New("token", strategies.Options{
			Client: redistest.Client(t, srv.Addr), Params: strategies.Params{TTL: strategies.TTLOf(time.Minute), Wait: strategies.Wait{Kind: strategies.WaitPubSub}},
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	}
	a, b := newProc(), newProc()
	key := redistest.Prefix(t) + "k"
	list := "{" + key + "}:pw"
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	holder := acquire(t, a, key, "a")
	got := make(chan error, 1)
	go func() {
		l, err := b.Acquire(ctx, key, "b")
		if err == nil {
			err = l.Release(context.Background())
		}
		got <- err
	}()
	waitFor(t, func() bool {
		n, _ := c.Do(ctx, c.B().Llen().Key(list).Build()).AsInt64()
		return n == 1
	})
	gone := "lockbench:turn:" + key + ":deadbeef0000" // what a killed process leaves
	if err := c.Do(ctx, c.B().Lpush().Key(list).Element(gone).Build()).Error(); err != nil {
		t.Fatal(err)
	}
	release(t, holder)
	if err := <-got; err != nil {
		t.Fatalf("the waiting process after a gone one: %v", err)
	}
	members, err := c.Do(ctx, c.B().Lrange().Key(list).Start(0).Stop(-1).Build()).AsStrSlice()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range members {
		if m == gone {
			t.Fatalf("the gone process is still listed: %v", members)
		}
	}
}
