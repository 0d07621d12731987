package workload

import (
	"context"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/redistest"
	"github.com/lockbench/lockbench/strategies"
)

// A key's oracle state fills one cache line: workers on different keys never share one, and
// a cycle's first look at its key brings in all it needs.
func TestKeyStateIsOneCacheLine(t *testing.T) {
	if n := reflect.TypeFor[keyState]().Size(); n != 64 {
		t.Fatalf("keyState is %d bytes, want 64", n)
	}
}

// A release that succeeded while a newcomer came in makes the newcomer a suspect; only the
// newcomer's own release, refused while its lease still ran, turns that into a misdelete —
// a compare-and-delete that removed its own lock just before the newcomer took the key
// (the newcomer then releases fine) is none.
func TestSuspectedMisdeleteIsConfirmedByTheVictim(t *testing.T) {
	for _, tt := range []struct {
		name             string
		notOwner, inTime bool
		want             bool
	}{
		{"victim's lock gone while its lease ran", true, true, true},
		{"victim released its own lock", false, true, false},
		{"victim's lease had lapsed anyway", true, false, false},
	} {
		var k keyState
		_, a := k.enter()
		k.exit(a)
		_, b := k.enter() // came in during a's release
		next, in := k.latestInside(a)
		if !in || next != b {
			t.Fatalf("latestInside(a) = %d, %v; want b (%d) inside", next, in, b)
		}
		k.suspectOf(next)
		if got := k.misdeleted(b, tt.notOwner, tt.inTime); got != tt.want {
			t.Errorf("%s: misdeleted %v, want %v", tt.name, got, tt.want)
		}
		if tt.want && k.misdeleted(b, true, true) {
			t.Errorf("%s: one suspicion counted twice", tt.name)
		}
	}
	var k keyState
	_, a := k.enter()
	k.exit(a)
	_, b := k.enter()
	if k.misdeleted(b, true, true) {
		t.Error("a refused release with no suspicion on the key counted as a misdelete")
	}
}

// stallFirst is a lock whose first won acquire does not come back until its lease has
// lapsed: a holder starved between taking the lock and stepping in (CPU starvation, a GC
// pause), which no fault point covers.
type stallFirst struct {
	strategies.Strategy
	stalled atomic.Bool
	stall   time.Duration
}

func (s *stallFirst) Acquire(ctx context.Context, key, owner string) (strategies.Lease, error) {
	l, err := s.Strategy.Acquire(ctx, key, owner)
	if err == nil && s.stalled.CompareAndSwap(false, true) {
		time.Sleep(s.stall) // the other acquires go on meanwhile
	}
	return l, err
}

// A holder that steps in after its lease lapsed is inside without a lock. The next holder,
// which took the key after that lock expired but stepped in before it, must not take it for
// a successor whose lock its own release removes: token's compare-and-delete removes only
// its own lock, so a misdelete here is the oracle's mistake. (Seen once on a starved CI-like
// machine: "UNSAFE: 26 overlaps, 1 misdelete" for token.)
//
// ttl 400ms, hold 300ms, stall 600ms: the first winner's lock expires at 400ms, the other
// worker takes the key and holds it until about 750ms, and the first winner steps in at
// 600ms, into it — an overlap, which is real.
func TestStarvedHolderIsNobodysMisdeleteVictim(t *testing.T) {
	_, c := redistest.Server(t)
	cfg := shortConfig("token")
	cfg.Workers, cfg.TTL, cfg.Duration, cfg.AcquireTimeout = 2, strategies.TTLOf(400*time.Millisecond), 1500*time.Millisecond, 2*time.Second
	cfg.Hold.Set("300ms")
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	ph := cfg.Phases[0]
	so, err := strategyOptions(ph, redisBackend(c), strategies.Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	token, err := strategies.New(ph.Strategy, so)
	if err != nil {
		t.Fatal(err)
	}
	defer token.Close()
	p := testPhase(&cfg, ph, &stallFirst{Strategy: token, stall: 600 * time.Millisecond})
	r, err := p.run(context.Background(), 1, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Safety.Overlaps == 0 {
		t.Fatalf("no overlap: the stalled holder did not step in on the next one (safety %+v)", r.Safety)
	}
	if r.Safety.Misdeletes != 0 {
		t.Errorf("token: %d misdeletes counted (safety %+v, verdict %q); a compare-and-delete removes only its own lock", r.Safety.Misdeletes, r.Safety, r.Verdict)
	}
}
