//go:build !race

package zookeeper_test

// Reconnects a session: without -race, for go-zookeeper's own data race (reconnect_test.go).

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/services/zookeeper"
	"github.com/lockbench/lockbench/strategies"
)

// With LostOnSuspended, a lease is lost as soon as its connection is (Curator's SUSPENDED);
// without it, only when its session expires. The server frozen for less than the session
// timeout cuts the connection (no ping answered) but keeps the session: both holders'
// znodes survive, and both releases delete their own.
func TestLostOnSuspended(t *testing.T) {
	c := conn(t)
	t.Cleanup(func() {
		c.LostOnSuspended = false
		for _, k := range []string{"suspended", "suspended-expiry", "suspended-curator"} {
			_ = c.Client.Delete(zookeeper.Root+"/"+k, -1) // the locks' parents; their znodes are gone
		}
	})
	leases := map[bool]strategies.Lease{}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, onSuspended := range []bool{false, true} {
		c.LostOnSuspended = onSuspended
		s, err := strategies.New(zookeeper.Name, strategies.Options{Params: strategies.Params{TTL: strategies.TTLOf(10 * time.Second)}, Service: c})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if leases[onSuspended], err = s.Acquire(ctx, "suspended", "a"); err != nil {
			t.Fatal(err)
		}
		if err := leases[onSuspended].Release(ctx); err != nil {
			t.Fatal(err)
		}
		if leases[onSuspended], err = s.Acquire(ctx, "suspended-"+map[bool]string{false: "expiry", true: "curator"}[onSuspended], "a"); err != nil {
			t.Fatal(err)
		}
	}
	p := c.Processes()[0]
	if err := p.Pause(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-leases[true].Lost():
	case <-ctx.Done():
		_ = p.Resume()
		t.Fatal("lease not lost within a minute of its server freezing, with LostOnSuspended")
	}
	if err := p.Resume(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-leases[false].Lost():
		t.Error("without LostOnSuspended, a lost connection signalled the lease lost")
	default:
	}
	for on, l := range leases {
		if err := l.Release(ctx); err != nil {
			t.Errorf("release (LostOnSuspended %v) after the connection came back: %v; want its znode deleted", on, err)
		}
	}
	if !strings.Contains(c.LostNote(), "SUSPENDED") {
		t.Errorf("LostNote = %q", c.LostNote())
	}
}
