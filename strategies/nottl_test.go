package strategies_test

import (
	"context"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/redistest"
	"github.com/lockbench/lockbench/strategies"
)

// Seed 003's first point: a lock without a ttl outlives a holder that dies. setnx-expire
// with NoTTL (--ttl 0) sends no EXPIRE: its key has none, its lease never ends, and a
// holder that never releases keeps everyone out for good. A release still frees it.
func TestWeaknessSetNXWithoutTTLOutlivesItsHolder(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "setnx-expire")
	s := e.strategy(t, func(o *strategies.Options) { o.TTL = strategies.NoTTL })
	key := redistest.Prefix(t) + "k"

	l, err := tryFor(s, key, "dies", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	pttl, err := e.client.Do(context.Background(), e.client.B().Pttl().Key(key).Build()).AsInt64()
	if err != nil || pttl != -1 {
		t.Fatalf("PTTL = %d (%v), want -1: a lock key without a ttl", pttl, err)
	}
	if l.ValidUntil().Before(time.Now().AddDate(100, 0, 0)) {
		t.Fatalf("a lease without a ttl should never end; ValidUntil %v", l.ValidUntil())
	}
	mustBeBusy(t, s, key, "anyone")
	if err := l.Release(context.Background()); err != nil {
		t.Fatal(err)
	}
	if l2, err := tryFor(s, key, "next", 5*time.Second); err != nil {
		t.Fatalf("after the release the lock is free: %v", err)
	} else {
		_ = l2.Release(context.Background())
	}
}

// Only the strategies that say so run without a ttl; the others name the one that does.
func TestNoTTLOnlyWhereTheStrategySaysSo(t *testing.T) {
	_, c := redistest.Server(t)
	for _, name := range []string{"token", "set-nx-del", "redisson-lock"} {
		_, err := strategies.New(name, strategies.Options{Client: c, Params: strategies.Params{TTL: strategies.NoTTL}})
		assertOptionError(t, err, "ttl", "only setnx-expire runs without one")
	}
	var takers []string
	for _, i := range strategies.Catalog() {
		if i.NoTTL {
			takers = append(takers, i.Name)
		}
	}
	if len(takers) != 1 || takers[0] != "setnx-expire" {
		t.Errorf("strategies that run without a ttl: %v, want [setnx-expire]", takers)
	}
}
