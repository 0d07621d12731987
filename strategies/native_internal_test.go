package strategies

import (
	"context"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/redistest"
)

// Under --wait native (the zero Wait) each strategy waits with the generic policy its
// constructor names as its own; under a named policy, with that one.
func TestNativeWaitIsEachStrategysOwnPolicy(t *testing.T) {
	t.Parallel()
	_, c := redistest.Server(t)
	for name, want := range map[string]Wait{
		"token":          {Kind: WaitSpin},
		"getset":         {Kind: WaitSpin},
		"reentrant-hash": {Kind: WaitSpin},
		"fenced":         {Kind: WaitSpin},
		"fair":           {Kind: WaitPubSub},
		"redisson-lock":  {Kind: WaitBackoff, Min: defaultBackoffMin, Max: defaultBackoffMax},
		"spin-lock":      {Kind: WaitBackoff, Min: redissonBackoffInitial, Max: redissonBackoffMax},
	} {
		for _, w := range []Wait{{}, {Kind: WaitPubSub}} {
			s, err := New(name, Options{Client: c, Params: Params{Wait: w}})
			if err != nil {
				t.Fatal(err)
			}
			got, exp := baseOf(t, s).policy, want
			if w.Kind != WaitNative && name != "spin-lock" {
				exp = w // a named policy is the one waited with (spin-lock keeps its own)
			}
			if got != exp {
				t.Errorf("%s, --wait %s: waits with %s, want %s", name, w, got, exp)
			}
			_ = s.Close()
		}
	}
}

// A strategy's native hook is its wait under --wait native, and only then: the seam that a
// wait of a strategy's own (Redisson's lock channel) plugs into.
func TestNativeHookRunsUnderNativeOnly(t *testing.T) {
	t.Parallel()
	_, c := redistest.Server(t)
	key := redistest.Prefix(t) + "k"
	ctx := context.Background()
	for _, w := range []Wait{{}, {Kind: WaitPubSub}, {Kind: WaitSpin}} {
		s, err := New("redisson-lock", Options{Client: c, Params: Params{TTL: TTLOf(time.Minute), Wait: w}})
		if err != nil {
			t.Fatal(err)
		}
		calls := 0
		b := baseOf(t, s)
		// The hook counts its runs by the channel it asks for, once per wait; under the
		// generic policies it is planted too, to show that wait passes it by.
		ps := newRedissonPubSub(c, lockMessages)
		b.native = &nativeWaiter{ps: ps, sleep: sleepTTL, channel: func(key string) string {
			calls++
			return redissonLockChannel(key)
		}}
		l, err := s.Acquire(ctx, key, "a")
		if err != nil || l == nil {
			t.Fatalf("--wait %s: acquire: %v", w, err)
		}
		if err := l.Release(ctx); err != nil {
			t.Fatal(err)
		}
		if want := map[bool]int{true: 1, false: 0}[w.Kind == WaitNative]; calls != want {
			t.Errorf("--wait %s: the native hook ran %d times for one acquire, want %d", w, calls, want)
		}
		ps.close()
		_ = s.Close()
	}
}

func baseOf(t *testing.T, s Strategy) *base {
	t.Helper()
	switch s := s.(type) {
	case *token:
		return s.base
	case *fenced:
		return s.base
	case *getset:
		return s.base
	case *reentrantHash:
		return s.base
	case *fair:
		return s.base
	case *redissonLock:
		return s.base
	}
	t.Fatalf("no base for %T", s)
	return nil
}
