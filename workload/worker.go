package workload

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lockbench/lockbench/internal/clock"
	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/strategies"
)

// worker is one goroutine's state; nothing in it is shared.
type worker struct {
	id    int
	owner string // unique across processes: lockbench's process id plus the worker number
	src   rand.PCG
	rng   *rand.Rand // over src
	pick  keyPicker
	actx  *acquireCtx   // bounds each acquire by the acquire timeout
	timer *time.Timer   // open loop: waits for long-off arrivals; made on first use
	wake  chan struct{} // the hold timer wakes it here (holdFor); made on first use
	cyc   cycleState
	ctx   context.Context // the worker's: the phase's work, as the faults see it
	lives int             // how many of its holders died (holder-crash): each made a new owner
	// next is the acquire of key nextKey that the last release carried (phase.chain), which
	// the next cycle waits for instead of acquiring; nil when there is none.
	next    strategies.Pending
	nextKey int

	// The cycle's keys: one, or a lock set's (--lock-set), with their names, entries and
	// section flags; made once with room for the set, refilled by choose. One key's live in
	// one, not in four allocations of their own.
	held    []int
	names   []string
	entries []uint64
	flags   []report.SectionFlags
	read    bool // the cycle takes a shared hold (--read-ratio)
	one     struct {
		held    [1]int
		names   [1]string
		entries [1]uint64
		flags   [1]report.SectionFlags
	}
}

// processID distinguishes this process's owners from another lockbench's on the same keys.
var processID = fmt.Sprintf("lb%06x", rand.Uint32()&0xffffff)

// newWorker makes worker id, which runs under ctx; its acquires end with kill (or time out),
// not with ctx.
func (p *phase) newWorker(ctx, kill context.Context, id int) *worker {
	w := &worker{id: id, owner: processID + ":" + strconv.Itoa(id)}
	if p.actxs != nil {
		w.actx = unwatchedAcquireCtx(ctx, kill) // startWorkers ends them all
		p.actxs[id] = w.actx
	} else {
		w.actx = newAcquireCtx(ctx, kill)
	}
	w.src.Seed(p.seed, uint64(id))
	w.rng = rand.New(&w.src)
	w.pick = p.cfg.KeyDist.picker(len(p.state), w.rng)
	if n := max(p.ph.LockSet, 1); n > 1 {
		w.held, w.names, w.entries, w.flags = make([]int, 0, n), make([]string, n), make([]uint64, n), make([]report.SectionFlags, n)
	} else {
		w.held, w.names, w.entries, w.flags = w.one.held[:0], w.one.names[:], w.one.entries[:], w.one.flags[:]
	}
	return w
}

// choose picks the next cycle's keys with the phase's key distribution — a lock set's
// distinct, so that sets overlap where the distribution makes keys hot, as real
// multi-resource updates do — and whether it reads. A set is taken in the keys' order, as a
// careful multi-resource update takes it: sets listing shared keys in opposite orders
// stall each other (multilock gives its set back after a round and livelocks).
func (p *phase) choose(w *worker) {
	w.held = append(w.held[:0], w.pick.pick())
	for len(w.held) < cap(w.held) {
		k := w.pick.pick()
		for tries := 0; slices.Contains(w.held, k); tries++ {
			if tries < 64 {
				k = w.pick.pick()
			} else {
				k = (k + 1) % len(p.state) // a skewed distribution's cold keys: the next free one
			}
		}
		w.held = append(w.held, k)
	}
	slices.Sort(w.held)
	for i, k := range w.held {
		w.names[i] = p.state[k].key
	}
	w.read = p.ph.ReadRatio > 0 && w.rng.Float64() < p.ph.ReadRatio
}

// startWorkers starts the phase's workers, each on its goroutine with its state made
// (newWorker), and parks them at a gate; release opens it. It returns once every worker is
// parked, reporting the start-up through progress once a second while it lasts and once
// when done, or early with ctx's error when ctx ends (the workers started so far stay
// parked: cancel work, then release them, and they end without a cycle).
//
// Starting is the one cost that grows with the workers alone — a goroutine, its stack and a
// few small allocations each (its random source, key picker and acquire context) — and it
// happens here, before the phase's clock starts: a million workers take seconds to start,
// which inside the warm-up or the window would be load that never came (issue 30, item 5).
func (p *phase) startWorkers(ctx, work, kill context.Context, workers *sync.WaitGroup, progress func(StartUp)) (release func(), err error) {
	n := p.ph.Concurrency()
	if n >= prefaultFleet {
		defer prefault(n * parkedStack)()
	}
	gate := make(chan struct{})
	p.actxs = make([]*acquireCtx, n)
	p.stopEnds = endAll(kill, p.actxs)
	release = sync.OnceFunc(func() { close(gate) })
	st := &starter{work: work, kill: kill, gate: gate}
	began := time.Now()
	spawned := make(chan struct{})
	go func() {
		defer close(spawned)
		for id := range n {
			if id%1024 == 0 && ctx.Err() != nil {
				break
			}
			st.parked.Add(1)
			workers.Go(func() { p.runWorker(st, id) })
		}
		st.parked.Wait()
	}()
	report := func(done bool) {
		progress(StartUp{Workers: n, Started: int(st.started.Load()), Elapsed: time.Since(began), Done: done})
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-spawned:
			if err := ctx.Err(); err != nil {
				return release, err
			}
			report(true)
			return release, nil
		case <-tick.C:
			report(false)
		}
	}
}

// A fleet of prefaultFleet workers or more has its stacks' pages made resident in one call
// before it starts (prefault): parkedStack bytes a worker, the stack it parks on
// (parkFrame). Its state on the heap, about 1.5 KiB more, faults as before. Not below: at
// 10,000 workers the faults cost about a tenth of a second, and the populated pages the heap
// kept raised the bench's scale row (10,000 workers, 15 s) by 10-11 MB: reentrant-hash and
// fair 221 MB with the prefault at 50,000, 232-233 with it at 10,000 (alternating, quiet).
const (
	prefaultFleet = 50000
	parkedStack   = 4 << 10
)

// starter is what the workers of a phase start with.
type starter struct {
	work, kill context.Context
	gate       <-chan struct{}
	started    atomic.Int64 // made and parked
	parked     sync.WaitGroup
}

// runWorker is worker id's goroutine: made, parked at the gate, then its loop. Its frame
// and the loop's stay small, as every byte of them is under the deepest wait of every
// cycle (see parkFrame).
func (p *phase) runWorker(st *starter, id int) {
	w := p.startWorker(st, id)
	if p.ph.Rate > 0 {
		p.openWorker(w.ctx, w)
	} else {
		p.closedWorker(w.ctx, w)
	}
	w.actx.close()
}

// startWorker makes worker id and parks it at the gate.
//
//go:noinline
func (p *phase) startWorker(st *starter, id int) *worker {
	wctx := p.workerContext(st.work, id)
	w := p.newWorker(wctx, st.kill, id)
	w.ctx = wctx
	st.started.Add(1)
	st.parked.Done()
	parkGrown(st.gate)
	return w
}

// parkFrame is the frame a worker parks in. A goroutine starts on a 2 KiB stack, and a
// cycle needs more: token's, at its deepest wait (inside rueidis, in the acquire), holds
// 3.0 KiB, and a frame may only begin 928 bytes above the stack's end. It would grow as the
// warm-up begins — a hundred thousand workers at once. Parking in a 1.5 KiB frame grows
// the stack to 4 KiB in one step during the start-up, where the deepest wait fits; the 2
// KiB one it leaves is the next worker's. It used to need 3.5 KiB, and 8 KiB stacks: the
// cycle's own frame (512 bytes) lay under the acquire's wait, and with it the fleet's
// stacks took twice the memory (800 MB for 100,000 workers). Now cycle keeps only the
// acquire and the release in its small frame (enter and leave hold the rest). A strategy
// that needs more grows it further in its first cycle.
const parkFrame = 1536

//go:noinline
func parkGrown(gate <-chan struct{}) {
	var frame [parkFrame]byte
	touch(frame[:])
	<-gate
}

//go:noinline
func touch(b []byte) { b[len(b)-1] = 1 }

func (p *phase) closedWorker(ctx context.Context, w *worker) {
	for ctx.Err() == nil {
		if w.next != nil {
			p.chosen(w, w.nextKey) // the release before began the acquire of it
		} else {
			p.choose(w)
		}
		p.cycle(ctx, w, time.Now())
	}
	if w.next != nil {
		w.next.Cancel()
		w.next = nil
	}
}

// chosen makes key k the cycle's one key (phase.chain: one key a cycle, no reads).
func (p *phase) chosen(w *worker, k int) {
	w.held = append(w.held[:0], k)
	w.names[0] = p.state[k].key
}

// openWorker takes arrivals off the schedule while it lasts: claim the next one, wait until
// it is due, run its cycle.
func (p *phase) openWorker(ctx context.Context, w *worker) {
	free := p.sched.start // until its first claim, free since the schedule began
	for ctx.Err() == nil {
		i, ok := p.sched.claim(free, time.Now())
		if !ok {
			return
		}
		due := p.sched.due(i)
		m := p.measured(due)
		if m {
			p.inflight.Add(1)
		}
		if w.waitUntil(ctx, due) {
			p.choose(w)
			p.cycle(ctx, w, due)
		}
		if m {
			p.inflight.Add(-1)
		}
		free = time.Now()
	}
}

// shortWait is the longest wait for an arrival that ignores the phase's end: a plain sleep,
// with no channel shared by every worker to select on. A free worker claims the next
// arrival nobody has claimed, so the free workers between them hold the next arrivals: at
// half the spread's rate (82,000/s) with 1,000 workers, a claim is about 11 ms ahead of its
// arrival. With 2 ms here nearly every arrival's wait selected on the phase's done channel,
// one lock for all the workers taken twice per arrival; with 25 ms none does, and the
// phase's end waits at most that long for a sleeping worker.
const shortWait = 25 * time.Millisecond

// waitUntil sleeps until t; false if ctx ended first.
func (w *worker) waitUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	switch {
	case d <= 0:
		return true
	case d <= shortWait:
		time.Sleep(d)
		return ctx.Err() == nil
	}
	if w.timer == nil {
		w.timer = time.NewTimer(d)
	} else {
		w.timer.Reset(d)
	}
	select {
	case <-w.timer.C:
		return true
	case <-ctx.Done():
		w.timer.Stop()
		return false
	}
}

// awaitInflight runs once the window's time is up: it ends the schedule — arrivals of the
// window that no worker has claimed by now are dropped — and waits for the claimed ones to
// finish, bounded by the acquire timeout plus slack.
func (p *phase) awaitInflight() {
	deadline := time.Now().Add(p.cfg.AcquireTimeout + 2*time.Second + 4*p.ph.Hold.MeanDuration())
	p.sched.close()
	for p.inflight.Load() > 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
}

// measured reports whether a cycle intended to start at t counts: in the closed loop every
// cycle does while recording is on; in the open loop only arrivals due in the window.
func (p *phase) measured(t time.Time) bool {
	return p.ph.Rate == 0 || !t.Before(p.winStart)
}

// cycle is one lock cycle over the worker's chosen keys (see choose): acquire, enter the
// resource and write to it, hold (re-entering in the middle of the hold, for reentrant
// strategies), write again, leave, release. Every key of a lock set is a resource of its
// own, entered, written and left as one key is. Latencies count from intended: the moment
// the acquire was due (open loop) or began (closed loop).
//
// The acquire and the release run in this small frame, the rest of the cycle in enter's
// and leave's: a worker waits longest, and deepest, inside its acquire and its release,
// and its stack must hold every frame under those waits (see parkFrame). What the cycle
// carries from one part to the next is in w.cyc.
func (p *phase) cycle(ctx context.Context, w *worker, intended time.Time) {
	c := &w.cyc
	c.intended, c.began = intended, time.Now()
	lease, err := p.acquire(w.actx.start(c.began, p.cfg.AcquireTimeout), w)
	w.actx.stop()
	c.got = time.Now()
	if err != nil {
		p.acquireFailed(ctx, w, err, p.measured(intended))
		return
	}
	c.lease = lease
	if p.enter(ctx, w) {
		if p.chain {
			p.leave(w, p.releaseChained(ctx, w, lease, c.m))
		} else {
			p.leave(w, p.release(ctx, w, lease, c.m))
		}
	}
	c.lease = nil
}

// cycleState is what a cycle carries from its acquire through enter to leave.
type cycleState struct {
	intended, began, got time.Time // the acquire was due, began, returned
	renewed              time.Time // how far re-entries extended the lease (work)
	relStart             time.Time // the release was announced
	lease                strategies.Lease
	m                    bool // measured
	exclusive            bool
	handoffUS            int64
	fence                uint64
	successors           uint64 // a bit per key of the set someone later is inside of
}

// enter is the cycle from the acquire to the release: the oracle's entry, the writes, the
// hold, the exit; false when the holder died inside (holder-crash) and releases nothing.
//
//go:noinline
func (p *phase) enter(ctx context.Context, w *worker) bool {
	c := &w.cyc
	lease, began, got := c.lease, c.began, c.got
	m := p.measured(c.intended)
	c.m = m
	handoffUS := int64(-1)
	for _, k := range w.held {
		if d, ok := p.state[k].handoff(w.id, int64(began.Sub(p.origin)), int64(got.Sub(p.origin))); ok && handoffUS < 0 {
			handoffUS = d.Microseconds()
		}
		if p.crashes != nil {
			p.crashes.acquired(k, int64(got.Sub(p.origin)))
		}
	}
	fence := lease.Fence()
	exclusive := p.capa.exclusive(w.read)
	for i, k := range w.held {
		ks := &p.state[k]
		overlap, entry, in := ks.enterAs(p.capa, w.read)
		w.entries[i], w.flags[i] = entry, 0
		if m {
			p.rec.inside(in, p.capa.rw)
		}
		if overlap {
			p.count(m, &p.rec.overlaps)
			w.flags[i] |= report.FlagOverlap
		}
	}
	if exclusive && p.lapsed(lease, p.deadline(lease, began, time.Time{})) {
		for i, k := range w.held {
			p.state[k].lockless(w.entries[i]) // starved since the acquire: no lock left for anyone to remove
		}
	}
	if !w.read { // a reader reads: only writers write
		for i, k := range w.held {
			if p.write(&p.state[k], fence, w.entries[i], false, m) == writeRefused {
				w.flags[i] |= report.FlagEnterRefused
			}
		}
	}
	renewed, dead := p.work(ctx, w, m)
	if dead {
		p.died(w, lease, m, c.intended, got, handoffUS)
		return false
	}

	// The last write. A holder told to (--on-lost abort) first checks that its lease still
	// runs, and abandons the write if not; a fault may stall it right after that check.
	aborted := p.cfg.OnLost == OnLostAbort && p.lapsed(lease, p.deadline(lease, began, renewed))
	if aborted {
		p.count(m, &p.rec.aborted)
	}
	if p.faults != nil {
		p.faults.StallWrite(ctx, w.id, w.owner)
	}
	for i, k := range w.held {
		ks := &p.state[k]
		switch {
		case aborted:
			w.flags[i] |= report.FlagAborted
		case w.read:
		default:
			switch p.write(ks, fence, w.entries[i], true, m) {
			case writeRefused:
				w.flags[i] |= report.FlagExitRefused
			case writeStale:
				w.flags[i] |= report.FlagExitStale
			}
		}
		ks.exitAs(p.capa, w.read, w.entries[i])
	}

	// The release is announced before it is sent: a strategy that hands the lock over
	// inside Redis (fair) can have the next holder's acquire return before this call does,
	// and that acquire must pair with this release, not the one before. Whether a later
	// holder is inside is read before it is sent too: that holder's lock is what a
	// successful release removes. (A bit per key of the set: sets are small.)
	relStart := time.Now()
	var successors uint64
	for i, k := range w.held {
		ks := &p.state[k]
		if i < 64 && ks.successorInside(w.entries[i]) {
			successors |= 1 << i
		}
		ks.released(w.id, int64(relStart.Sub(p.origin)))
	}
	c.exclusive, c.handoffUS, c.fence, c.successors, c.renewed, c.relStart = exclusive, handoffUS, fence, successors, renewed, relStart
	return true
}

// leave is the cycle after its release (rel): what the release tells the oracle, and the
// recording.
//
//go:noinline
func (p *phase) leave(w *worker, rel releaseOutcome) {
	c := &w.cyc
	lease, began, got, intended, renewed, relStart := c.lease, c.began, c.got, c.intended, c.renewed, c.relStart
	m, exclusive, handoffUS, fence, successors := c.m, c.exclusive, c.handoffUS, c.fence, c.successors
	relEnd := time.Now()
	for i, k := range w.held {
		ks, entry := &p.state[k], w.entries[i]
		switch {
		case rel == released && successors&(1<<i) != 0:
			// Someone who came after is inside: the lock this release removed was theirs.
			p.count(m, &p.rec.misdeletes)
			w.flags[i] |= report.FlagReleased | report.FlagMisdelete
		case rel == released:
			w.flags[i] |= report.FlagReleased
			// The lease's deadline first: the key's line, gone from the cache during the
			// release's round trip, is read only for a release that ended late (issue 32).
			if late := !relEnd.Before(p.deadline(lease, began, renewed)); late {
				if next, in := ks.latestInside(entry); in {
					// Someone came in during a release that ended after the lease could have
					// lapsed. Either it took the key after this release removed our own lock,
					// or the lease lapsed, it took the key, and this release removed its lock:
					// its own release will tell.
					ks.suspectOf(next)
				}
			}
		case exclusive && ks.misdeleted(entry, rel == notOwner, relEnd.Before(p.deadline(lease, began, renewed).Add(-drift(p.ph.TTL.Duration())))):
			// The whole release came and went before this lease could lapse, and found the
			// lock gone: only the suspected release can have removed it.
			p.count(m, &p.rec.misdeletes)
			w.flags[i] |= report.FlagMisdelete
		}
	}
	if m && !p.rec.cycle(w.id, got.Sub(intended).Microseconds(), handoffUS,
		relStart.Sub(got).Microseconds(), relEnd.Sub(relStart).Microseconds()) {
		m = false // it ended outside the window: the recorder did not count it
	}
	if p.hist != nil {
		// Every section goes into the history, so that the cross-process check sees the
		// holders around the window too; only the acquires counted are counted there.
		for i, k := range w.held {
			if !m {
				w.flags[i] |= report.FlagUnmeasured
			}
			p.hist.add(w.id, k, w.flags[i], got.Sub(p.origin), relStart.Sub(p.origin), fence, w.read)
		}
	}
}

// acquire takes the worker's chosen keys: the set, a shared hold, or the one key; or waits
// for the acquire of the key that the worker's last release carried.
func (p *phase) acquire(ctx context.Context, w *worker) (strategies.Lease, error) {
	if next := w.next; next != nil {
		w.next = nil
		return next.Wait(ctx)
	}
	switch {
	case len(w.held) > 1:
		return p.sets.AcquireSet(ctx, w.names[:len(w.held)], w.owner)
	case w.read:
		return p.shared.AcquireShared(ctx, w.names[0], w.owner)
	}
	return p.strat.Acquire(ctx, w.names[0], w.owner)
}

// died is the end of a cycle whose holder died inside its critical section (holder-crash):
// it leaves the resource, writing nothing more, and never releases. Its connection stays
// when its strategy shares one client among the workers (the Redis strategies and
// libraries: another goroutine's death closes nothing) and goes when the lease is bound to
// a connection of its holder's own (a lease with Abandon: pg-advisory's session). Its
// lease stays as the service keeps it until the phase is over (crashes.bury), and the
// worker goes on as a new client. The cycle counts as an acquire without a release.
func (p *phase) died(w *worker, lease strategies.Lease, m bool, intended, got time.Time, handoffUS int64) {
	for i, k := range w.held {
		p.state[k].exitAs(p.capa, w.read, w.entries[i])
	}
	now := time.Now()
	if a, ok := lease.(interface{ Abandon() }); ok {
		a.Abandon() // a lease bound to its holder's own connection loses it with the holder
	}
	p.count(m, &p.rec.crashed)
	for _, k := range w.held {
		p.crashes.crashed(k, int64(now.Sub(p.origin)), m && p.rec.on.Load())
	}
	p.crashes.buried(lease)
	w.reborn()
	if m && !p.rec.cycle(w.id, got.Sub(intended).Microseconds(), handoffUS, now.Sub(got).Microseconds(), -1) {
		m = false
	}
	if p.hist != nil {
		for i, k := range w.held {
			if !m {
				w.flags[i] |= report.FlagUnmeasured
			}
			p.hist.add(w.id, k, w.flags[i], got.Sub(p.origin), now.Sub(p.origin), lease.Fence(), w.read)
		}
	}
}

// count adds to a rare-event counter when the cycle is measured.
func (p *phase) count(m bool, c *atomic.Uint64) {
	if m {
		p.rec.count(c)
	}
}

// work is the critical section's work: the hold, with the re-entries (--reentry) in its
// middle so that the nested holds last half of it, as a nested call inside real work does;
// then whatever stall a fault puts there, and the holder's death if a fault kills it there
// (dead: nothing is released, not even the re-entries). It returns how far the re-entries
// extended the lock's lease (a reentrant-hash entry resets its ttl), zero when none did.
func (p *phase) work(ctx context.Context, w *worker, m bool) (renewed time.Time, dead bool) {
	hold := p.ph.Hold.sample(w.rng)
	if p.cfg.Reentry == 0 || !p.info.Reentrant {
		p.holdFor(ctx, w, hold, m)
		return time.Time{}, p.stall(ctx, w)
	}
	p.holdFor(ctx, w, hold/2, m)
	nested := p.reenter(ctx, w, m)
	p.holdFor(ctx, w, hold-hold/2, m)
	if p.stall(ctx, w) {
		return time.Time{}, true
	}
	for i := len(nested) - 1; i >= 0; i-- {
		if v := nested[i].ValidUntil(); v.After(renewed) {
			renewed = v
		}
		p.release(ctx, w, nested[i], m)
	}
	return renewed, false
}

// stall runs the faults placed after the hold: the stalls, then the holder's death, which
// it reports.
func (p *phase) stall(ctx context.Context, w *worker) (dead bool) {
	if p.faults == nil {
		return false
	}
	p.faults.Stall(ctx, w.id, w.owner)
	return ctx.Err() == nil && p.faults.Crash(w.id, w.owner)
}

// write is the protected resource receiving a write from entry's holder carrying fence,
// as it enters or (last) as it leaves. What the resource makes of it is counted: a refused
// write from a holder someone superseded is a stale fence (fencing worked), from one
// nobody superseded a fence regression (the fence went backwards); an accepted last write
// from a superseded holder is a stale write (the harm an overlap does).
func (p *phase) write(ks *keyState, fence, entry uint64, last, m bool) writeResult {
	res := ks.write(fence, entry)
	switch res {
	case writeRefused:
		if last && ks.superseded(entry) {
			p.count(m, &p.rec.staleFences)
		} else {
			p.count(m, &p.rec.fenceRegressions)
		}
	case writeReused:
		p.count(m, &p.rec.fenceReuses)
	}
	if last && res != writeRefused && ks.superseded(entry) {
		p.count(m, &p.rec.staleWrites)
		return writeStale
	}
	return res
}

// lapsed reports whether the holder's lease is gone by its own reckoning: its watchdog
// gave up on it, or its deadline is closer than the clock drift Redlock allows for.
func (p *phase) lapsed(l strategies.Lease, deadline time.Time) bool {
	select {
	case <-l.Lost():
		return true
	default:
	}
	return !time.Now().Before(deadline.Add(-drift(p.ph.TTL.Duration())))
}

// deadline is the earliest the lease can expire in Redis: by the lease's own reckoning when
// it keeps one (the ttl from the start of the attempt that took it, moved by each renewal),
// else the ttl from the acquire's start; or later, when a re-entry extended it (renewed).
func (p *phase) deadline(l strategies.Lease, began, renewed time.Time) time.Time {
	d := l.ValidUntil()
	if d.IsZero() {
		d = began.Add(p.ph.TTL.Duration())
	}
	if renewed.After(d) {
		d = renewed
	}
	return d
}

// drift is the clock drift a lease's holder allows for: Redlock's 1% of the ttl plus 2ms.
func drift(ttl time.Duration) time.Duration { return ttl/100 + 2*time.Millisecond }

// reenter takes the held key again Reentry times. A re-entry granted to a holder that
// another worker superseded meanwhile is counted: its lease had lapsed, yet the strategy
// let it go on as if it had held the lock all along — seed 001's local count does, and so
// does the hash script when the intruder's lock lapsed too (it re-creates the lock for the
// returning owner).
func (p *phase) reenter(ctx context.Context, w *worker, m bool) []strategies.Lease {
	nested := make([]strategies.Lease, 0, p.cfg.Reentry)
	for range p.cfg.Reentry {
		l, err := p.acquire(w.actx.start(time.Now(), p.cfg.AcquireTimeout), w)
		w.actx.stop()
		if err != nil {
			p.acquireFailed(ctx, w, err, m)
			break
		}
		p.count(m, &p.rec.reentries)
		if p.state[w.held[0]].superseded(w.entries[0]) {
			p.count(m, &p.rec.unsafeReentries)
		}
		nested = append(nested, l)
	}
	return nested
}

// releaseOutcome is what became of a release.
type releaseOutcome uint8

const (
	released      releaseOutcome = iota // the strategy removed the lock
	notOwner                            // the strategy found the lock no longer this holder's
	releaseFailed                       // an error: Redis, the network, the context
)

// chainNote is what a phase that chained says in its result.
const chainNote = "lockbench's chain: each release carried the worker's next acquire, which the driver began once the release was done; an acquire's latency counts from lockbench's next cycle, after the release's reply"

// releaseChained releases the cycle's lease in a phase that chains (phase.chain). While the
// phase goes on it picks the worker's next key, and the release carries its acquire, which
// the next cycle waits for (worker.next): the lock's service takes the key again as soon as
// the release is done, as a program that gives a lock back and retakes it does, without a
// round trip back to lockbench in between. That acquire's latency counts, as every
// acquire's, from the next cycle's start, which comes after the release returned: it began
// in the service up to the release's reply's way back earlier.
func (p *phase) releaseChained(ctx context.Context, w *worker, l strategies.Lease, m bool) releaseOutcome {
	cr, ok := l.(strategies.ChainedRelease)
	if !ok || ctx.Err() != nil {
		return p.release(ctx, w, l, m)
	}
	k := w.pick.pick()
	next, err := cr.ReleaseThen(context.Background(), p.state[k].key, w.owner, p.cfg.AcquireTimeout)
	if next != nil {
		w.next, w.nextKey = next, k
	}
	return p.releaseOutcome(w, err, m)
}

// release gives a lease up and says what became of it. Once the phase is over the release
// still happens — a benchmark must not leave locks behind — but bounded in time.
func (p *phase) release(ctx context.Context, w *worker, l strategies.Lease, m bool) releaseOutcome {
	rctx := context.Background()
	if ctx.Err() != nil {
		var cancel context.CancelFunc
		rctx, cancel = context.WithTimeout(rctx, 2*time.Second)
		defer cancel()
	}
	return p.releaseOutcome(w, l.Release(rctx), m)
}

// releaseOutcome is what a release that returned err became.
func (p *phase) releaseOutcome(w *worker, err error, m bool) releaseOutcome {
	switch {
	case err == nil:
		return released
	case errors.Is(err, strategies.ErrNotOwner):
		p.count(m, &p.rec.lostLeases)
		return notOwner
	default:
		p.failed(w, err, report.OpRelease, m)
		return releaseFailed
	}
}

func (p *phase) acquireFailed(ctx context.Context, w *worker, err error, m bool) {
	switch {
	case ctx.Err() != nil:
		// The phase ended or the run was interrupted: not the strategy's doing.
	case errors.Is(err, strategies.ErrNotAcquired):
		if m {
			p.rec.timeout(w.id)
		}
	case errors.Is(err, strategies.ErrCrashed):
		// A simulated crash: the client "restarts" and goes on; its lock stays behind. The
		// fault reports how many.
	default:
		p.failed(w, err, report.OpAcquire, m)
		clock.Sleep(ctx, 10*time.Millisecond) // a failing Redis must not become a hot loop
	}
}

// failed counts a failed lock-server call of operation op (acquire, release) by its kind
// (errkind.go); the first of each kind is kept whether measured or not. An error after which
// the strategy cannot go on (a driver that died, hung or wrote garbage) ends the phase.
func (p *phase) failed(w *worker, err error, op string, m bool) {
	p.errs.add(err, op, p.channels, m && p.rec.failure(w.id))
	if strategies.IsFatal(err) {
		p.giveUp(err) // its strategy cannot go on: the phase ends now
	}
}

// holdFor keeps w in its critical section for d, or until ctx ends. The process's hold
// timer ends it (holdtimer.go): exact to tens of microseconds, with at most two goroutines
// spinning for every holder of the process rather than each spinning its own. How late each
// measured hold ended is counted for the result (hold_error_us).
func (p *phase) holdFor(ctx context.Context, w *worker, d time.Duration, m bool) {
	if d <= 0 || ctx.Err() != nil {
		return
	}
	if w.wake == nil {
		w.wake = make(chan struct{}, 1)
	}
	late, ok := processHolds().hold(ctx, d, w.wake)
	if ok && m && p.rec.on.Load() {
		p.holdErr.add(late)
	}
}
