package strategies_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/redistest"
	"github.com/lockbench/lockbench/strategies"
)

// pauses records the ReleasePause calls of one strategy, and whether the lock was still in
// Redis at each: the hook must run before the release deletes anything.
type pauses struct {
	e     *env
	mu    sync.Mutex
	calls []pauseCall
}

type pauseCall struct {
	key, owner string
	held       bool // the lock key was still in Redis when the hook ran
}

func (p *pauses) hook(ctx context.Context, key, owner string) {
	// The strategies store the lock under key, or hash-tagged for their derived keys.
	n, _ := p.e.client.Do(ctx, p.e.client.B().Exists().Key(key, "{"+key+"}").Build()).AsInt64()
	p.mu.Lock()
	p.calls = append(p.calls, pauseCall{key, owner, n > 0})
	p.mu.Unlock()
}

func (p *pauses) taken() []pauseCall {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.calls
	p.calls = nil
	return c
}

// ReleasePause runs once per release that talks to Redis, with the lease's key and owner,
// before the lock is deleted — for every strategy: the common lease, redlock's and
// reentrant-local's own. A reentrant-local release that only lowers the local count runs
// none; get-del runs it only when its GET found the lock still its own.
func TestReleasePauseRunsOncePerRelease(t *testing.T) {
	t.Parallel()
	for _, name := range strategies.Names() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, name)
			p := &pauses{e: e}
			s := e.strategy(t, func(o *strategies.Options) { o.Hooks.ReleasePause = p.hook })
			key := redistest.Prefix(t) + "k"
			want := func(n int, owner string) {
				t.Helper()
				calls := p.taken()
				if len(calls) != n {
					t.Fatalf("%d ReleasePause calls, want %d: %+v", len(calls), n, calls)
				}
				for _, c := range calls {
					if c.key != key || c.owner != owner || !c.held {
						t.Fatalf("ReleasePause(%q, %q) with the lock held=%v; want (%q, %q) before the delete", c.key, c.owner, c.held, key, owner)
					}
				}
			}

			l := acquire(t, s, key, "a")
			want(0, "")
			release(t, l)
			want(1, "a")

			if info := s.Info(); info.Reentrant {
				outer := acquire(t, s, key, "b")
				inner := acquire(t, s, key, "b")
				release(t, inner)
				if name == "reentrant-local" {
					want(0, "") // a local count going down: no Redis command to stall
				} else {
					want(1, "b") // reentrant-hash decrements its count in Redis
				}
				release(t, outer)
				want(1, "b")
			}

			if name == "get-del" {
				// A lease that lapsed: the GET finds nothing, so there is no DEL to stall.
				const ttl = 100 * time.Millisecond
				short := e.strategy(t, func(o *strategies.Options) {
					o.TTL = strategies.TTLOf(ttl)
					o.Hooks.ReleasePause = p.hook
				})
				lapsed := acquire(t, short, key, "c")
				waitGone(t, e.client, key)
				_ = lapsed.Release(context.Background())
				want(0, "")
			}
		})
	}
}
