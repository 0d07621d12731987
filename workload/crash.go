package workload

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/strategies"
)

// crashes is what a phase keeps of its dead holders (holder-crash): when each one left its
// key, how long the key stayed blocked, and the dead leases, given up after the phase.
type crashes struct {
	// at is, per key, when a holder died on it in the measured window (ns since the phase
	// clock's origin) while nobody has acquired the key since; 0 = none.
	at []atomic.Int64

	mu        sync.Mutex
	blockedNS []int64            // per recovered crash: from the crash to the next acquire
	dead      []strategies.Lease // never released by their holders
}

func newCrashes(keys int) *crashes { return &crashes{at: make([]atomic.Int64, keys)} }

// crashed records a holder's death on key k at now, measured or not; the first death
// counts when two overlapping holders die before anyone takes the key.
func (c *crashes) crashed(k int, now int64, l strategies.Lease, measured bool) {
	if measured {
		c.at[k].CompareAndSwap(0, max(now, 1))
	}
	c.mu.Lock()
	c.dead = append(c.dead, l)
	c.mu.Unlock()
}

// acquired is an acquire of key k at now: it ends the key's block after a crash, if any.
// Without a crash pending it costs one atomic load.
func (c *crashes) acquired(k int, now int64) {
	at := c.at[k].Load()
	if at == 0 || !c.at[k].CompareAndSwap(at, 0) {
		return
	}
	c.mu.Lock()
	c.blockedNS = append(c.blockedNS, max(now-at, 0))
	c.mu.Unlock()
}

// blocked sums up the blocks at now (ns since the origin): the recovered ones, and the
// keys still blocked, for which now is as far as the phase saw. Nil without crashes.
func (c *crashes) blocked(now int64) *report.CrashBlocked {
	c.mu.Lock()
	ns := slices.Clone(c.blockedNS)
	c.mu.Unlock()
	out := report.CrashBlocked{Recovered: uint64(len(ns))}
	if len(ns) > 0 {
		slices.Sort(ns)
		out.P50 = time.Duration(ns[(len(ns)-1)/2]).Milliseconds()
		out.Max = time.Duration(ns[len(ns)-1]).Milliseconds()
	}
	for i := range c.at {
		if at := c.at[i].Load(); at != 0 {
			out.Stuck++
			out.StuckFor = max(out.StuckFor, time.Duration(now-at).Milliseconds())
		}
	}
	if out.Recovered == 0 && out.Stuck == 0 {
		return nil
	}
	return &out
}

// bury gives up the dead holders' leases once the phase is over, as a benchmark must not
// leave locks behind: their watchdogs and sessions end, and the locks their services still
// keep go. It runs after the stuck locks were counted, so that a lock a dead holder left
// without a ttl still shows as the deadlock it is.
func (c *crashes) bury(ctx context.Context) {
	c.mu.Lock()
	dead := c.dead
	c.dead = nil
	c.mu.Unlock()
	if len(dead) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for _, l := range dead {
		wg.Go(func() { _ = l.Release(ctx) }) // mostly ErrNotOwner: the service freed it
	}
	wg.Wait()
}

// note says in one line what the crashes did to the phase, "" without any.
func crashNote(n uint64, b *report.CrashBlocked) string {
	if n == 0 || b == nil {
		return ""
	}
	line := fmt.Sprintf("%d holders died holding their lock", n)
	if b.Recovered > 0 {
		line += fmt.Sprintf("; their keys were blocked for p50 %s, max %s before the next acquire",
			fmtMS(b.P50), fmtMS(b.Max))
	}
	if b.Stuck > 0 {
		line += fmt.Sprintf("; %d never acquired again before the phase ended (blocked %s by then)", b.Stuck, fmtMS(b.StuckFor))
	}
	return line
}

func fmtMS(ms int64) string { return (time.Duration(ms) * time.Millisecond).String() }

// reborn makes the worker, whose holder just died, a new client: a new owner, so that
// nothing of the dead one (its renewals, its session) is taken for its own.
func (w *worker) reborn() {
	w.lives++
	w.owner = processID + ":" + strconv.Itoa(w.id) + "." + strconv.Itoa(w.lives)
}
