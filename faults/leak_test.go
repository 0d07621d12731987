package faults_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/workload"
)

// After a faulted run — clients behind proxies, replication through the failover's proxy,
// a master killed and restarted — closing the target and the proxies leaves nothing behind:
// no redis-server or sentinel process (the killed master's first process included), no
// proxy listening. The second case cancels the run while the fault is under way (the master
// dead, the sentinels not yet done), as Ctrl-C does: the fault must still be undone and
// everything stopped.
func TestNoLeaks(t *testing.T) {
	t.Parallel()
	for _, cancelMidFault := range []bool{false, true} {
		name := "completed"
		if cancelMidFault {
			name = "cancelled mid-fault"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := spawn(t, benchSpec{topology: "sentinel", proxy: true, failover: true})
			seen := pids(b.conn)
			if len(seen) != 5 {
				t.Fatalf("sentinel topology: %d processes (%v), want master, replica and 3 sentinels", len(seen), seen)
			}
			// Cancelled, the phase has a deadline's time, so that a busy machine that kills the
			// master late still kills it inside the window.
			d := 1500 * time.Millisecond
			if cancelMidFault {
				d = deadline
			}
			cfg := config(d, phase("token", func(ph *workload.Phase) {
				ph.Keys, ph.Hold = 100, hold("5ms")
				ph.Faults = []string{"latency:node=0,ms=1", "failover:at=300ms,lag=100ms"}
			}))

			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			type outcome struct {
				results []report.Result
				err     error
			}
			done := make(chan outcome, 1)
			go func() {
				rs, err := workload.Run(ctx, cfg, b.target(), b.options())
				done <- outcome{rs, err}
			}()
			master := b.conn.Servers[0]
			if cancelMidFault {
				// The failover kills the master at 300ms and restarts it only when the phase
				// ends: cancel in between.
				waitFor(t, time.Minute, "the failover to kill the master", func() bool { return !master.Running() })
				cancel()
			}
			out := <-done
			err := out.err
			switch {
			case cancelMidFault && !errors.Is(err, context.Canceled):
				t.Errorf("cancelled run returned %v, want context.Canceled", err)
			case !cancelMidFault && err != nil:
				t.Fatalf("run: %v", err)
			}
			rs := b.viaJSON(t, cfg, out.results)
			if len(rs) != 1 || rs[0].Interrupted != cancelMidFault {
				t.Errorf("%d results, want 1 with interrupted=%v", len(rs), cancelMidFault)
			}
			if !master.Running() {
				t.Errorf("the run is over, yet the killed master was not restarted: the fault was not undone")
			}

			seen = append(seen, pids(b.conn)...)
			slices.Sort(seen)
			seen = slices.Compact(seen)
			listeners := b.proxies.Listeners()
			if len(listeners) == 0 || b.conn.ReplicationVia == "" {
				t.Fatalf("proxies %v, replication via %q: the run did not go through proxies", listeners, b.conn.ReplicationVia)
			}
			listeners = append(listeners, b.conn.ReplicationVia)

			b.conn.Close()
			b.proxies.Close()
			for _, pid := range seen {
				if alive(pid) {
					t.Errorf("process %d still exists after Close", pid)
				}
			}
			for _, addr := range listeners {
				if !refuses(addr) {
					t.Errorf("proxy %s still accepts connections after Close", addr)
				}
			}
			t.Logf("%d processes gone, %d proxies closed", len(seen), len(listeners))
		})
	}
}

// waitFor polls cond every 10ms until it holds, failing t after limit.
func waitFor(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited %s for %s", limit, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
