package faults_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/faults"
	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/workload"
)

// The engine takes a *faults.Set as its workload.Faults.
var _ workload.Faults = (*faults.Set)(nil)

// The client-side faults act through the Set's methods and hooks, which these tests call
// directly, as the engine and the strategies do. A fault that must not stall is given a
// duration of an hour, so that "it returned while its context was still alive" proves it did
// not stall, with no wall-clock threshold to tune; one that must stall is checked to block at
// least its d.

// newSet parses raws and builds their Set for 4 workers; client-side faults need no nodes.
func newSet(t *testing.T, raws ...string) *faults.Set {
	t.Helper()
	specs, err := faults.ParseAll(raws)
	if err != nil {
		t.Fatal(err)
	}
	s, err := faults.New(specs, 4, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// generous is a context long enough for any stall a test means to end by itself.
func generous(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// stalls reports how long f blocked, and fails t if it only returned because ctx ended.
func stalls(t *testing.T, ctx context.Context, what string, f func(context.Context)) time.Duration {
	t.Helper()
	start := time.Now()
	f(ctx)
	took := time.Since(start)
	if ctx.Err() != nil {
		t.Fatalf("%s blocked until its context ended (%s)", what, took)
	}
	return took
}

// A release-pause with p=1 stalls every release at the ReleasePause hook for d; with p=0 it
// never does. A cancelled release is not held for the rest of d.
func TestReleasePauseHook(t *testing.T) {
	t.Parallel()
	const d = 150 * time.Millisecond
	h := newSet(t, "release-pause:p=1,d=150ms").Hooks()
	if h.ReleasePause == nil {
		t.Fatal("release-pause sets no ReleasePause hook")
	}
	if took := stalls(t, generous(t), "ReleasePause p=1", func(ctx context.Context) { h.ReleasePause(ctx, "k", "w0") }); took < d {
		t.Errorf("ReleasePause with p=1, d=%s returned after %s", d, took)
	}

	never := newSet(t, "release-pause:p=0,d=1h").Hooks()
	stalls(t, generous(t), "ReleasePause p=0", func(ctx context.Context) { never.ReleasePause(ctx, "k", "w0") })

	always := newSet(t, "release-pause:p=1,d=1h").Hooks()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	always.ReleasePause(ctx, "k", "w0") // returns when ctx ends, not after an hour

	for _, raw := range []string{"holder-pause:p=1,d=1h", "process-pause:p=1,d=1h", "crash-between:p=1"} {
		if newSet(t, raw).Hooks().ReleasePause != nil {
			t.Errorf("%s sets a ReleasePause hook: every release would pay for a fault it does not inject", raw)
		}
	}
}

// A process-pause freezes its holder in Stall (point=hold, the default) or in StallWrite
// (point=write), never in both, and the holder's renewals (BeforeRenew) freeze with it while
// another owner's renew freely.
func TestProcessPausePointHooks(t *testing.T) {
	t.Parallel()
	const d = 150 * time.Millisecond
	type stall func(s *faults.Set, ctx context.Context, worker int, owner string)
	hold := (*faults.Set).Stall
	write := (*faults.Set).StallWrite
	for _, c := range []struct {
		point        string // as given after the spec; "" = the default
		pauses, free stall
	}{
		{"", hold, write},
		{",point=hold", hold, write},
		{",point=write", write, hold},
	} {
		name := strings.TrimPrefix(c.point, ",")
		if name == "" {
			name = "default"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			// The stall lasts at least d where it is placed, and does not happen where it is not.
			s := newSet(t, "process-pause:p=1,d=150ms"+c.point)
			if took := stalls(t, generous(t), "the placed stall", func(ctx context.Context) { c.pauses(s, ctx, 0, "w0") }); took < d {
				t.Errorf("process-pause%s stalled %s, want at least %s", c.point, took, d)
			}
			s = newSet(t, "process-pause:p=1,d=1h"+c.point)
			stalls(t, generous(t), "the other stall", func(ctx context.Context) { c.free(s, ctx, 0, "w0") })

			// While w0 is frozen, its renewal waits for the pause to end; w1's does not.
			renew := s.Hooks().BeforeRenew
			if renew == nil {
				t.Fatal("process-pause sets no BeforeRenew hook")
			}
			pauseCtx, endPause := context.WithCancel(context.Background())
			defer endPause()
			paused := make(chan struct{})
			go func() { c.pauses(s, pauseCtx, 0, "w0"); close(paused) }()
			waitFor(t, time.Minute, "w0's renewals to freeze", func() bool {
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
				defer cancel()
				renew(ctx, "k", "w0")
				return ctx.Err() != nil // it waited until its own context ended
			})
			// w0's renewal is started before w1's, and is still blocked once w1's returned: no
			// time window, the frozen renewal above already showed it waits.
			renewed := make(chan struct{})
			go func() { renew(context.Background(), "k", "w0"); close(renewed) }()
			stalls(t, generous(t), "w1's renewal", func(ctx context.Context) { renew(ctx, "k", "w1") })
			select {
			case <-renewed:
				t.Fatal("w0's renewal went through while w0 was frozen")
			case <-paused:
				t.Fatal("the hour-long pause ended by itself")
			default:
			}
			endPause()
			for what, ch := range map[string]chan struct{}{"the pause": paused, "w0's renewal": renewed} {
				select {
				case <-ch:
				case <-time.After(time.Minute):
					t.Fatalf("%s did not end with the pause", what)
				}
			}
		})
	}
}

// At the phase's end Run reports, per spec, how often each random client-side fault struck:
// two release-pause specs are counted apart, and a point=write pause says where it froze.
func TestClientFaultCounts(t *testing.T) {
	t.Parallel()
	raws := []string{"release-pause:p=1,d=1ms", "release-pause:p=0,d=2ms", "process-pause:p=1,d=1ms,point=write", "process-pause:p=1,d=1ms"}
	s := newSet(t, raws...)
	ctx := generous(t)
	h := s.Hooks()
	for range 3 {
		h.ReleasePause(ctx, "k", "w0")
	}
	for range 2 {
		s.StallWrite(ctx, 0, "w0")
	}
	s.Stall(ctx, 0, "w0")

	var events []report.Event
	done, stop := context.WithCancel(context.Background())
	stop() // the phase is over: Run only reports
	s.Run(done, time.Now(), func(e report.Event) { events = append(events, e) })
	want := map[string]string{
		raws[0]: "3 releases stalled 1ms before their delete (get-del: between GET and DEL)",
		raws[1]: "0 releases stalled 2ms before their delete",
		raws[2]: "2 holders frozen 1ms with their renewals between their lease check and their last write",
		raws[3]: "1 holders frozen 1ms with their renewals",
	}
	if len(events) != len(want) {
		t.Errorf("events %v, want one per spec", events)
	}
	for _, e := range events {
		if w, ok := want[e.Fault]; !ok || !strings.HasPrefix(e.What, w) {
			t.Errorf("event %q: %q, want it to start with %q", e.Fault, e.What, w)
		}
		if e.Fault == raws[3] && strings.Contains(e.What, "write") {
			t.Errorf("a point=hold pause says %q", e.What)
		}
	}
}

// A random fault's strikes are reported as they happen, stamped at the first strike of each
// report, not all at the window's end: a window that began 10s ago, a strike now, one more
// later, then the end.
func TestClientFaultEventsAreStampedWhenTheyStrike(t *testing.T) {
	t.Parallel()
	raw := "holder-pause:p=1,d=1ms"
	s := newSet(t, raw)
	ctx := generous(t)
	windowStart := time.Now().Add(-10 * time.Second)
	events := make(chan report.Event, 16)
	run, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.Run(run, windowStart, func(e report.Event) { events <- e })
	}()
	next := func(what string) report.Event {
		t.Helper()
		select {
		case e := <-events:
			return e
		case <-ctx.Done():
			stop()
			t.Fatalf("no event for %s", what)
			return report.Event{}
		}
	}

	before := time.Since(windowStart).Seconds()
	s.Stall(ctx, 0, "w0")
	after := time.Since(windowStart).Seconds()
	first := next("the first strike")
	if first.TS < before || first.TS > after || !strings.HasPrefix(first.What, "1 holders stalled 1ms") {
		t.Errorf("first event at t=%.3fs %q; want it stamped at its strike, between t=%.3fs and %.3fs, counting 1", first.TS, first.What, before, after)
	}

	before = time.Since(windowStart).Seconds()
	s.Stall(ctx, 0, "w0")
	after = time.Since(windowStart).Seconds()
	second := next("the second strike")
	stop()
	<-done
	if second.TS < before || second.TS > after || !strings.Contains(second.What, "(2 in all)") {
		t.Errorf("second event at t=%.3fs %q; want it stamped at its strike, between t=%.3fs and %.3fs, with 2 in all", second.TS, second.What, before, after)
	}
	select {
	case e := <-events:
		t.Errorf("an event after the strikes were reported: %+v", e)
	default:
	}
}
