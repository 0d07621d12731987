package workload

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lockbench/lockbench/internal/clock"
	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/strategies"
)

// crashes is what a phase keeps of its dead holders (holder-crash): when each one left its
// key, how long the key stayed blocked, and the dead leases, given up after the phase.
type crashes struct {
	// at is, per key, when a holder died on it in the measured window (ns since the phase
	// clock's origin) while nobody has acquired the key since; 0 = none.
	at []atomic.Int64

	// deaths are, per key, the holders that died on it, warm-up included, and when the
	// last one did: where a semaphore's permits may have leaked.
	deaths []keyDeaths

	mu        sync.Mutex
	blockedNS []int64            // per recovered crash: from the crash to the next acquire
	dead      []strategies.Lease // never released by their holders
}

type keyDeaths struct {
	n    atomic.Int32
	last atomic.Int64 // ns since the phase clock's origin
}

func newCrashes(keys int) *crashes {
	return &crashes{at: make([]atomic.Int64, keys), deaths: make([]keyDeaths, keys)}
}

// crashed records a holder's death on key k at now, measured or not; the first death
// counts when two overlapping holders die before anyone takes the key. A lease over a set
// of keys dies on each of them; buried keeps it.
func (c *crashes) crashed(k int, now int64, measured bool) {
	if measured {
		c.at[k].CompareAndSwap(0, max(now, 1))
	}
	c.deaths[k].n.Add(1)
	raise64(&c.deaths[k].last, now)
}

// buried keeps a dead holder's lease, never released by it, for bury.
func (c *crashes) buried(l strategies.Lease) {
	c.mu.Lock()
	c.dead = append(c.dead, l)
	c.mu.Unlock()
}

func raise64(a *atomic.Int64, v int64) {
	for {
		cur := a.Load()
		if v <= cur || a.CompareAndSwap(cur, v) {
			return
		}
	}
}

// leaked counts a semaphore's permits that dead holders took and nothing gave back: on
// each key a holder died on, the permits missing (Permits - Available), at most one per
// death there. Call it once the live holders have released. A permit with a lease of its
// own (expirable-semaphore) comes back when that runs out, so a key still short is judged
// only once a ttl (plus the clocks' drift) has passed since its last death: until then the
// key is polled, and a key found whole is done.
func (c *crashes) leaked(ctx context.Context, p *phase) (uint64, error) {
	pc, ok := p.strat.(strategies.PermitCounter)
	if !ok {
		return 0, fmt.Errorf("%s does not count its permits", p.ph.Strategy)
	}
	var pending []int
	for k := range c.deaths {
		if c.deaths[k].n.Load() > 0 {
			pending = append(pending, k)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, p.ph.TTL.Duration()+drift(p.ph.TTL.Duration())+10*time.Second)
	defer cancel()
	var total uint64
	for len(pending) > 0 {
		next := time.Time{} // the earliest deadline of a key still short
		kept := pending[:0]
		for _, k := range pending {
			avail, err := pc.Available(ctx, p.state[k].key)
			if err != nil {
				return total, err
			}
			missing := min(max(p.ph.Permits-avail, 0), int(c.deaths[k].n.Load()))
			if missing == 0 {
				continue
			}
			due := p.origin.Add(time.Duration(c.deaths[k].last.Load()) + p.ph.TTL.Duration() + drift(p.ph.TTL.Duration()))
			if !time.Now().Before(due) {
				total += uint64(missing)
				continue
			}
			if next.IsZero() || due.Before(next) {
				next = due
			}
			kept = append(kept, k)
		}
		pending = kept
		if len(pending) > 0 && !clock.Sleep(ctx, min(time.Until(next), 100*time.Millisecond)) {
			return total, ctx.Err()
		}
	}
	return total, nil
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
