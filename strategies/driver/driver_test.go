package driver_test

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/proc"
	"github.com/lockbench/lockbench/internal/usage"
	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/strategies/driver"
)

// The null driver's hello makes the catalog entry, and one lock goes round the protocol:
// granted with a fence, a second acquire of the held key times out, release, a second
// release is refused locally, a renewal through lockbench's watchdog keeps a short lease.
func TestProtocolRoundTrip(t *testing.T) {
	bin := testdriver(t)
	o := target(t)
	s := build(t, bin+" null", o)
	info := s.Info()
	if info.Name != "driver:"+bin+" null" || info.Source != "testdriver 1 (null)" || !info.Fencing || !info.AutoRenew || info.Reentrant {
		t.Errorf("info %+v: want the hello's name, version and supports", info)
	}
	if !strings.Contains(info.Summary, "ping round trip") {
		t.Errorf("summary %q: want the protocol's round trip", info.Summary)
	}
	t.Logf("ping round trip p50 %s at start (noisy: a busy machine)", s.(*driver.Strategy).RoundTrip())
	l, err := s.Acquire(ctxFor(t, 5*time.Second), "k1", "w1")
	if err != nil {
		t.Fatalf("acquire: %v", err)
	}
	if l.Fence() == 0 {
		t.Errorf("fence 0: want the driver's fence")
	}
	_, err = s.Acquire(ctxFor(t, 50*time.Millisecond), "k1", "w2")
	if !errors.Is(err, strategies.ErrNotAcquired) {
		t.Errorf("second acquire of a held key: %v, want ErrNotAcquired", err)
	}
	if err := l.Release(ctxFor(t, 5*time.Second)); err != nil {
		t.Errorf("release: %v", err)
	}
	if err := l.Release(ctxFor(t, 5*time.Second)); !errors.Is(err, strategies.ErrReleased) {
		t.Errorf("second release: %v, want ErrReleased", err)
	}
	l2, err := s.Acquire(ctxFor(t, 5*time.Second), "k1", "w2")
	if err != nil {
		t.Fatalf("acquire after release: %v", err)
	}
	if l2.Fence() <= l.Fence() {
		t.Errorf("fence %d after %d: want it to grow", l2.Fence(), l.Fence())
	}
	if err := l2.Release(ctxFor(t, 5*time.Second)); err != nil {
		t.Errorf("release: %v", err)
	}

	// A lease past its ttl is not the holder's any more: the driver says not_owner.
	o.TTL = strategies.TTLOf(30 * time.Millisecond)
	short := build(t, bin+" null", o)
	l3, err := short.Acquire(ctxFor(t, 5*time.Second), "k2", "w1")
	if err != nil {
		t.Fatalf("acquire: %v", err)
	}
	l4, err := short.Acquire(ctxFor(t, 5*time.Second), "k2", "w2") // waits out the ttl
	if err != nil {
		t.Fatalf("acquire after the ttl: %v", err)
	}
	if err := l3.Release(ctxFor(t, 5*time.Second)); !errors.Is(err, strategies.ErrNotOwner) {
		t.Errorf("release of an expired lease: %v, want ErrNotOwner", err)
	}
	l4.Release(ctxFor(t, 5*time.Second))

	// With --watchdog the driver renews a 300ms lease while it is held far longer (10
	// renewals 100ms apart; a margin of 200ms for a renewal on a starved machine).
	o.TTL, o.Watchdog = strategies.TTLOf(300*time.Millisecond), strategies.Watchdog{Interval: 100 * time.Millisecond}
	dog := build(t, bin+" null", o)
	l5, err := dog.Acquire(ctxFor(t, 5*time.Second), "k3", "w1")
	if err != nil {
		t.Fatalf("acquire: %v", err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for dog.Stats().Renewals < 10 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := dog.Acquire(ctxFor(t, 30*time.Millisecond), "k3", "w2"); !errors.Is(err, strategies.ErrNotAcquired) {
		t.Errorf("acquire of a renewed lease: %v, want ErrNotAcquired", err)
	}
	if err := l5.Release(ctxFor(t, 5*time.Second)); err != nil {
		t.Errorf("release of a renewed lease after %d renewals: %v", dog.Stats().Renewals, err)
	}
}

// Many workers' requests interleave on one driver: 40 goroutines on 4 keys, each acquire
// answered by its own id, and a key never has two holders at once.
func TestInterleavedRequests(t *testing.T) {
	for _, mode := range []string{"null", "token"} {
		t.Run(mode, func(t *testing.T) {
			o := target(t)
			s := build(t, testdriver(t)+" "+mode, o)
			var inside [4]atomic.Int32
			var overlaps, acquired atomic.Int64
			var wg sync.WaitGroup
			for w := range 40 {
				wg.Go(func() {
					for i := range 20 {
						k := (w + i) % 4
						l, err := s.Acquire(ctxFor(t, 20*time.Second), fmt.Sprintf("%sk%d", mode, k), fmt.Sprintf("w%d", w))
						if err != nil {
							t.Errorf("acquire: %v", err)
							return
						}
						if inside[k].Add(1) > 1 {
							overlaps.Add(1)
						}
						acquired.Add(1)
						time.Sleep(100 * time.Microsecond)
						inside[k].Add(-1)
						if err := l.Release(ctxFor(t, 10*time.Second)); err != nil {
							t.Errorf("release: %v", err)
						}
					}
				})
			}
			wg.Wait()
			if acquired.Load() != 800 || overlaps.Load() != 0 {
				t.Errorf("acquired %d of 800, %d overlaps: want all, none", acquired.Load(), overlaps.Load())
			}
		})
	}
}

// A driver that dies, hangs, writes garbage or never says hello ends its strategy with one
// line naming the driver; every later call fails the same way at once, and neither the
// driver nor the child it started outlives it.
func TestBrokenDriver(t *testing.T) {
	defer driver.SetTimeouts(500*time.Millisecond, 2*time.Second)()
	bin := testdriver(t)
	o := target(t)
	for _, tc := range []struct {
		args string
		want string
	}{
		{"die-after 3", "exited (exit status 3); its stderr ends: testdriver: dying as asked"},
		{"hang-after 3", "hung: no reply to acquire"},
		{"garbage-after 3", `wrote a line that is not JSON: "this is not json"`},
	} {
		t.Run(strings.Fields(tc.args)[0], func(t *testing.T) {
			pidfile := filepath.Join(t.TempDir(), "pids")
			t.Setenv("TESTDRIVER_PIDFILE", pidfile)
			cmd := bin + " null " + tc.args
			s := build(t, cmd, o)
			pids := pidsIn(t, pidfile)
			// Until the driver breaks: a hung driver's acquire times out first, and the
			// hang shows once its timeout + Grace has passed.
			var err error
			var de *driver.Error
			for i := 0; i < 50 && !errors.As(err, &de); i++ {
				var l strategies.Lease
				l, err = s.Acquire(ctxFor(t, 300*time.Millisecond), fmt.Sprint("k", i), "w")
				if err == nil {
					l.Release(ctxFor(t, time.Second))
				}
			}
			if !errors.As(err, &de) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), `driver "`+cmd+`"`) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %v: want one line naming the driver and saying %q", err, tc.want)
			}
			if _, again := s.Acquire(ctxFor(t, time.Second), "k", "w"); again == nil || again.Error() != err.Error() {
				t.Errorf("acquire after the failure: %v, want the same error at once", again)
			}
			gone(t, pids) // before Close: the failure killed them
		})
	}
	t.Run("silent", func(t *testing.T) {
		_, err := strategies.New("driver:"+bin+" null silent 0", o)
		if err == nil || !strings.Contains(err.Error(), "said no hello within") || strings.Contains(err.Error(), "\n") {
			t.Errorf("error %v: want one line saying it said no hello", err)
		}
	})
}

// Close ends the driver and everything it started, and a driver that is not found is the
// user's error: one line, exit code 2, before anything runs.
func TestCloseAndMissingCommand(t *testing.T) {
	o := target(t)
	pidfile := filepath.Join(t.TempDir(), "pids")
	t.Setenv("TESTDRIVER_PIDFILE", pidfile)
	s, err := strategies.New("driver:"+testdriver(t)+" null", o)
	if err != nil {
		t.Fatal(err)
	}
	pids := pidsIn(t, pidfile)
	s.Close()
	gone(t, pids)

	_, err = strategies.Resolve("driver:/no/such/driver --flag")
	var ec interface{ ExitCode() int }
	if !errors.As(err, &ec) || ec.ExitCode() != usage.ExitCode || !strings.Contains(err.Error(), "/no/such/driver") || strings.Contains(err.Error(), "\n") {
		t.Errorf("missing command: %v, want a one-line usage error naming it", err)
	}
}

// A process pause freezes the driver's whole process group (SIGSTOP) until the last of the
// pauses under way ends, and an acquire sent meanwhile is answered after the thaw.
func TestPauseFreezesTheDriver(t *testing.T) {
	o := target(t)
	var freeze func() func()
	o.Hooks.OnPause = func(f func() func()) { freeze = f }
	s := build(t, testdriver(t)+" null", o)
	if freeze == nil {
		t.Fatal("the strategy did not register its freeze (Hooks.OnPause)")
	}
	pid := s.(interface{ Pid() int }).Pid()
	thaw1, thaw2 := freeze(), freeze()
	if st := waitState(pid, 'T'); st != 'T' {
		t.Fatalf("driver state %c while frozen: want T (stopped)", st)
	}
	got := make(chan error, 1)
	go func() {
		l, err := s.Acquire(ctxFor(t, 10*time.Second), "k", "w")
		if err == nil {
			err = l.Release(context.Background())
		}
		got <- err
	}()
	thaw1()
	select {
	case err := <-got:
		t.Fatalf("acquire answered while the driver was still frozen (one pause left): %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	if st := proc.State(pid); st != 'T' {
		t.Errorf("driver state %c with one pause left: want T", st)
	}
	thaw2()
	if err := <-got; err != nil {
		t.Errorf("acquire after the thaw: %v", err)
	}
}

// waitState waits up to 10s for pid to be in state want (signals are delivered
// asynchronously) and returns the state it saw last.
func waitState(pid int, want byte) byte {
	deadline := time.Now().Add(10 * time.Second)
	for {
		st := proc.State(pid)
		if st == want || time.Now().After(deadline) {
			return st
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A fleet is a driver per process: two strategies (as two lockbench processes of --procs 2
// build) run two driver processes on one hot key. The token driver's lock lives in Redis
// and keeps them apart; the null driver's lives in each driver's memory, and the two
// processes' holders overlap — the shape a fleet test exists to catch.
func TestFleetDriverEach(t *testing.T) {
	bin := testdriver(t)
	o := target(t)
	for _, tc := range []struct {
		mode     string
		overlaps bool
	}{{"token", false}, {"null", true}} {
		t.Run(tc.mode, func(t *testing.T) {
			procs := []strategies.Strategy{build(t, bin+" "+tc.mode, o), build(t, bin+" "+tc.mode, o)}
			if a, b := procs[0].(interface{ Pid() int }).Pid(), procs[1].(interface{ Pid() int }).Pid(); a == b {
				t.Fatalf("both strategies speak to driver %d: want one each", a)
			}
			var inside, overlaps atomic.Int32
			var acquired [2]atomic.Int64
			var wg sync.WaitGroup
			for p, s := range procs {
				for w := range 5 {
					wg.Go(func() {
						for range 40 {
							l, err := s.Acquire(ctxFor(t, 20*time.Second), "fleet-"+tc.mode, fmt.Sprintf("p%dw%d", p, w))
							if err != nil {
								t.Errorf("acquire: %v", err)
								return
							}
							if inside.Add(1) > 1 {
								overlaps.Add(1)
							}
							acquired[p].Add(1)
							time.Sleep(200 * time.Microsecond)
							inside.Add(-1)
							l.Release(ctxFor(t, 10*time.Second))
						}
					})
				}
			}
			wg.Wait()
			t.Logf("%s: acquired %d + %d, %d overlaps", tc.mode, acquired[0].Load(), acquired[1].Load(), overlaps.Load())
			if acquired[0].Load() != 200 || acquired[1].Load() != 200 {
				t.Errorf("acquired %d and %d: want 200 each", acquired[0].Load(), acquired[1].Load())
			}
			if got := overlaps.Load() > 0; got != tc.overlaps {
				t.Errorf("%s: %d overlaps across the two drivers; want overlaps: %v", tc.mode, overlaps.Load(), tc.overlaps)
			}
		})
	}
}

// When the run dials through a function of its own (the fault layer's proxies), the
// driver's connections go through it too: the driver reaches Redis through a forwarder
// that dials as the run does, and the function sees its connections.
func TestRunDialingReachesTheDriver(t *testing.T) {
	o := target(t)
	var dials atomic.Int32
	o.Connect.DialCtxFn = func(ctx context.Context, addr string, d *net.Dialer, _ *tls.Config) (net.Conn, error) {
		dials.Add(1)
		return d.DialContext(ctx, "tcp", addr)
	}
	s := build(t, testdriver(t)+" token", o)
	l, err := s.Acquire(ctxFor(t, 10*time.Second), "dialed", "w")
	if err != nil {
		t.Fatalf("acquire: %v", err)
	}
	if err := l.Release(ctxFor(t, 10*time.Second)); err != nil {
		t.Errorf("release: %v", err)
	}
	if dials.Load() == 0 {
		t.Errorf("the run's dial function saw none of the driver's connections")
	}
	s.Close()
}

// Many calls at once each get their reply, and none waits for one that was already read:
// 32 goroutines cycle on keys of their own, so that whoever reads the driver's replies
// changes hands all the time (a call reads its own reply when nobody else reads). A reply
// lost between two readers stalls its call until its context ends; the test fails then.
func TestManyCallsEachGetTheirReply(t *testing.T) {
	s := build(t, testdriver(t)+" null", target(t))
	ctx := ctxFor(t, 20*time.Second)
	var wg sync.WaitGroup
	for w := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			owner := "w" + strconv.Itoa(w)
			for i := range 400 {
				l, err := s.Acquire(ctx, owner+"-"+strconv.Itoa(i%2), owner)
				if err != nil {
					t.Errorf("%s: acquire %d: %v", owner, i, err)
					return
				}
				if err := l.Release(ctx); err != nil {
					t.Errorf("%s: release %d: %v", owner, i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// A driver that supports chain takes a release that carries the worker's next acquire: the
// release is answered first, then the acquire, whose lease counts its validity from when
// the release was sent. A carried acquire given up unwaited (Cancel) is given back: its key
// comes free in Redis. A driver that does not say chain is never sent one.
func TestChainedRelease(t *testing.T) {
	bin := testdriver(t)
	o := target(t)
	if s := build(t, bin+" token", o); s.(strategies.Chainer).Chains() {
		t.Fatalf("a driver whose hello does not say chain: Chains() true")
	}
	t.Setenv("TESTDRIVER_CHAIN", "1")
	s := build(t, bin+" token chain", o) // a name of its own: the catalog keeps an entry per name
	if !s.(strategies.Chainer).Chains() || !strings.Contains(s.Info().Summary, "lockbench's chain") {
		t.Fatalf("Chains() false or summary %q: want the driver's chain used and named", s.Info().Summary)
	}
	exists := func(key string) bool {
		n, err := o.Client.Do(context.Background(), o.Client.B().Exists().Key(key).Build()).AsInt64()
		if err != nil {
			t.Fatalf("exists %s: %v", key, err)
		}
		return n == 1
	}
	l, err := s.Acquire(ctxFor(t, 5*time.Second), "chain:a", "w1")
	if err != nil {
		t.Fatalf("acquire: %v", err)
	}
	sent := time.Now()
	next, err := l.(strategies.ChainedRelease).ReleaseThen(ctxFor(t, 5*time.Second), "chain:b", "w1", 5*time.Second)
	if err != nil || next == nil {
		t.Fatalf("release then acquire: %v (next %v)", err, next)
	}
	returned := time.Now() // the release's reply came: the carried acquire began before
	nl, err := next.Wait(ctxFor(t, 5*time.Second))
	if err != nil {
		t.Fatalf("the carried acquire: %v", err)
	}
	if exists("chain:a") || !exists("chain:b") {
		t.Errorf("after the chained release: a exists %v, b exists %v; want a released and b taken", exists("chain:a"), exists("chain:b"))
	}
	if v, ttl := nl.ValidUntil(), o.TTL.Duration(); v.Before(sent.Add(ttl)) || v.After(returned.Add(ttl)) {
		t.Errorf("valid until %s after the release was sent, %s after its reply: want the ttl (%s) from the send", v.Sub(sent), v.Sub(returned), ttl)
	}
	if err := l.Release(ctxFor(t, time.Second)); !errors.Is(err, strategies.ErrReleased) {
		t.Errorf("release of a lease released by ReleaseThen: %v, want ErrReleased", err)
	}

	// The next acquire carried, then given up: the grant that comes is given back.
	next, err = nl.(strategies.ChainedRelease).ReleaseThen(ctxFor(t, 5*time.Second), "chain:c", "w1", 5*time.Second)
	if err != nil || next == nil {
		t.Fatalf("release then acquire: %v (next %v)", err, next)
	}
	next.Cancel()
	if exists("chain:b") {
		t.Errorf("after the second chained release: b still exists")
	}
	// Whenever the cancelled grant comes (before Cancel or after), it is given back: another
	// worker takes c well within the 10s ttl that a grant kept by nobody would block it for.
	start := time.Now()
	l2, err := s.Acquire(ctxFor(t, 5*time.Second), "chain:c", "w2")
	if err != nil {
		t.Fatalf("acquire after the cancel: %v (the cancelled grant was kept)", err)
	}
	t.Logf("another worker took the cancelled acquire's key after %s", time.Since(start).Round(time.Millisecond))
	l2.Release(ctxFor(t, 5*time.Second))
}
