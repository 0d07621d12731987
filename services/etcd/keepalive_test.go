package etcd_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockbench/lockbench/services/etcd"
	"github.com/lockbench/lockbench/strategies"
)

// errRestarting stands for a keep-alive that fails fast while the lease lives on: the
// member it went to restarting, the stream cut.
var errRestarting = errors.New("injected: the member restarting")

// A keep-alive that fails is retried, as etcd's client retries, while the lease can still
// be alive: two failures in a row do not lose the lock, the third call renews it, and the
// holder releases its own key. (The keep-alive loop used to end the session on the first.)
//
// Lease 9 s, keep-alive every 3 s, retries every 0.5 s: the renewal lands near 4 s, five
// seconds before the lease could lapse.
func TestFailedKeepAliveIsRetried(t *testing.T) {
	t.Parallel()
	c := conn(t)
	s, err := strategies.New(etcd.Name, strategies.Options{Params: strategies.Params{TTL: strategies.TTLOf(9 * time.Second)}, Service: c})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var calls atomic.Int32
	etcd.FailKeepAlives(s, func() error {
		if calls.Add(1) <= 2 {
			return errRestarting
		}
		return nil
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	l, err := s.Acquire(ctx, "retried-keepalive", "a")
	if err != nil {
		t.Fatal(err)
	}
	for s.Stats().Renewals == 0 {
		select {
		case <-l.Lost():
			t.Fatalf("lease marked lost after %d keep-alive calls, none answered by etcd; want retries until it lapses", calls.Load())
		case <-ctx.Done():
			t.Fatalf("no renewal within 30 s: %d keep-alive calls, stats %+v", calls.Load(), s.Stats())
		case <-time.After(50 * time.Millisecond):
		}
	}
	if st := s.Stats(); st.RenewFailures != 0 {
		t.Errorf("stats %+v: two retried failures counted as lost leases", st)
	}
	if err := l.Release(ctx); err != nil {
		t.Errorf("release of the renewed lease: %v; want its key still there", err)
	}
}

// When no keep-alive gets through, the lease is given up once it could have lapsed: Lost
// closes, but not before the lease's ttl since its grant (ValidUntil).
func TestKeepAliveGivesUpAtTheLapse(t *testing.T) {
	t.Parallel()
	c := conn(t)
	s, err := strategies.New(etcd.Name, strategies.Options{Params: strategies.Params{TTL: strategies.TTLOf(etcd.MinTTL)}, Service: c})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var calls atomic.Int32
	etcd.FailKeepAlives(s, func() error { calls.Add(1); return errRestarting })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	l, err := s.Acquire(ctx, "lapsed-keepalive", "a")
	if err != nil {
		t.Fatal(err)
	}
	lapse := l.ValidUntil()
	select {
	case <-l.Lost():
	case <-ctx.Done():
		t.Fatalf("lease not given up within 30 s though every keep-alive failed (%d calls)", calls.Load())
	}
	if now := time.Now(); now.Before(lapse) {
		t.Errorf("lease given up %s before it could lapse, after %d keep-alive calls", lapse.Sub(now), calls.Load())
	}
	if n := calls.Load(); n < 2 {
		t.Errorf("%d keep-alive calls before giving up; want retries", n)
	}
	if st := s.Stats(); st.RenewFailures != 1 || st.Renewals != 0 {
		t.Errorf("stats %+v; want one lease given up, no renewal", st)
	}
	if err := l.Release(ctx); err != nil && !errors.Is(err, strategies.ErrNotOwner) {
		t.Errorf("release after the lease was given up: %v", err)
	}
}
