package workload

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/rueidis"

	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/target"
)

// Target is the Redis a run drives strategies against. The clients belong to the caller.
type Target struct {
	// Client reaches the Redis that the single-node strategies lock on.
	Client rueidis.Client
	// Nodes are independent masters for redlock; without them redlock is refused.
	Nodes []rueidis.Client
}

// Progress is the live state of a run, reported once a second.
type Progress struct {
	Phase, Phases int // 1-based
	Strategy      string
	Warmup        bool          // in the unrecorded warm-up
	Elapsed       time.Duration // into the warm-up or the measured window
	Total         time.Duration // length of the warm-up or the measured window
	AcquireRate   float64       // acquisitions per second over the last second
	P99US         int64         // acquire p99 over the window so far
	Overlaps      uint64        // in the window so far
}

// Options are the run's observers.
type Options struct {
	// Progress, when set, is called from the collector goroutine once a second.
	Progress func(Progress)
}

// Run drives each configured strategy for one phase and returns one Result per phase that
// started. When ctx ends mid-run, the interrupted phase's Result covers what ran, is marked
// interrupted, and Run returns ctx's error alongside the results.
func Run(ctx context.Context, cfg Config, t Target, o Options) ([]report.Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	// Build every strategy once before running anything: a bad option fails the run at once,
	// not after the first phases have taken minutes.
	for _, name := range cfg.Strategies {
		s, err := strategies.New(name, strategyOptions(&cfg, t))
		if err != nil {
			return nil, err
		}
		_ = s.Close()
	}
	var results []report.Result
	for i, name := range cfg.Strategies {
		p, err := newPhase(i, name, &cfg, t)
		if err != nil {
			return results, err
		}
		r, err := p.run(ctx, len(cfg.Strategies), o)
		results = append(results, r)
		if err != nil {
			return results, err
		}
	}
	return results, nil
}

func strategyOptions(cfg *Config, t Target) strategies.Options {
	return strategies.Options{Client: t.Client, Nodes: t.Nodes, TTL: cfg.TTL, Watchdog: cfg.Watchdog, Wait: cfg.Wait}
}

// phase is one strategy's run.
type phase struct {
	index  int
	name   string
	cfg    *Config
	strat  strategies.Strategy
	info   strategies.Info
	nodes  []target.Node // the servers whose INFO measures this phase's cost
	prefix string        // every key of the phase starts with it
	keys   []string      // built once: the hot path never formats a key
	state  []keyState
	rec    *recorder
	origin time.Time // monotonic origin of keyState timestamps
	seed   uint64

	// Open loop: the measured window is the arrivals due in [winStart, winEnd), however late
	// they are sent or finish (wrk2's definition: lateness is latency, not lost rate).
	winStart, winEnd time.Time
	inflight         atomic.Int64  // in-window arrivals sent and not finished
	paced            chan struct{} // closed when the pacer has sent its last arrival

	firstErr atomic.Pointer[string] // the first Redis error a worker saw, for the report
}

func newPhase(index int, name string, cfg *Config, t Target) (*phase, error) {
	strat, err := strategies.New(name, strategyOptions(cfg, t))
	if err != nil {
		return nil, err
	}
	p := &phase{
		index: index, name: name, cfg: cfg, strat: strat, info: strat.Info(),
		prefix: cfg.KeyPrefix + strconv.Itoa(index+1) + ":" + name + ":",
		keys:   make([]string, cfg.Keys),
		state:  make([]keyState, cfg.Keys),
		origin: time.Now(),
		seed:   rand.Uint64(),
	}
	// Each key carries its own hash tag: keys spread over a cluster's slots, and a strategy's
	// derived keys (queue, fence counter) share their lock's slot.
	for i := range p.keys {
		p.keys[i] = p.prefix + "{" + strconv.Itoa(i) + "}"
	}
	if p.info.MultiNode {
		p.nodes = target.Nodes(t.Nodes...)
	} else {
		p.nodes = target.Nodes(t.Client)
	}
	workers := cfg.Workers
	if cfg.Rate > 0 {
		workers = cfg.MaxInflight
	}
	p.rec = newRecorder(workers)
	return p, nil
}

// run executes the phase: warm-up, measured window, drain. The strategy is closed and the
// phase's keys deleted before it returns.
func (p *phase) run(ctx context.Context, phases int, o Options) (report.Result, error) {
	defer p.strat.Close()
	defer p.cleanup()

	work, stop := context.WithCancel(ctx)
	defer stop()
	var wg sync.WaitGroup
	start := time.Now()
	open := p.cfg.Rate > 0
	var finish func() // runs when the window's time is up, before the last sample
	if open {
		p.winStart = start.Add(max(p.cfg.Warmup, 0))
		p.winEnd = p.winStart.Add(p.cfg.Duration)
		p.paced = make(chan struct{})
		p.rec.on.Store(true) // arrivals due before winStart are not measured; see measured
		finish = p.awaitInflight
		arrivals := make(chan time.Time)
		for w := range p.cfg.MaxInflight {
			wg.Go(func() { p.openWorker(work, w, arrivals) })
		}
		wg.Go(func() { p.pace(work, start, arrivals) })
	} else {
		for w := range p.cfg.Workers {
			wg.Go(func() { p.closedWorker(work, w) })
		}
	}
	drain := func() {
		p.rec.on.Store(false)
		stop()
		wg.Wait()
	}

	progress := func(pr Progress) {
		if o.Progress != nil {
			pr.Phase, pr.Phases, pr.Strategy = p.index+1, phases, p.name
			o.Progress(pr)
		}
	}
	if !p.warmup(ctx, start, progress) {
		drain()
		r := p.result(start, start, nil, nil)
		r.Interrupted = true
		return r, ctx.Err()
	}

	before, infoErr := target.Snapshot(ctx, p.nodes)
	statsBefore := p.strat.Stats()
	p.rec.on.Store(true)
	windowStart := time.Now()
	timeline, intervals := p.collect(ctx, windowStart, progress, finish)
	windowEnd := time.Now()
	if open && ctx.Err() == nil {
		windowStart, windowEnd = p.winStart, p.winEnd
	}
	after, err := target.Snapshot(context.WithoutCancel(ctx), p.nodes)
	infoErr = errors.Join(infoErr, err)
	drain()

	r := p.result(windowStart, windowEnd, timeline, intervals)
	r.Renewals = p.strat.Stats().Renewals - statsBefore.Renewals
	if infoErr == nil {
		p.fillCost(&r, before, after)
	}
	if ctx.Err() != nil {
		r.Interrupted = true
		return r, ctx.Err()
	}
	return r, nil
}

// warmup lets the workers run unrecorded for the warm-up time; false when ctx ended.
func (p *phase) warmup(ctx context.Context, start time.Time, progress func(Progress)) bool {
	if p.cfg.Warmup <= 0 {
		return true
	}
	end := time.NewTimer(p.cfg.Warmup)
	defer end.Stop()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-end.C:
			return true
		case <-tick.C:
			progress(Progress{Warmup: true, Elapsed: time.Since(start), Total: p.cfg.Warmup})
		}
	}
}

// collect runs the measured window: once a second it merges the shards' last second into
// the timeline and reports progress. It returns when the window ends or ctx does.
func (p *phase) collect(ctx context.Context, start time.Time, progress func(Progress), finish func()) ([]report.Second, []report.Interval) {
	end := time.NewTimer(p.cfg.Duration)
	defer end.Stop()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()

	sec, soFar := report.NewHistogram(), report.NewHistogram()
	var timeline []report.Second
	var intervals []report.Interval
	var prev totals
	var prevOverlaps uint64
	last := start
	sample := func(now time.Time) {
		t := p.rec.tick(sec)
		soFar.Merge(sec)
		overlaps := p.rec.overlaps.Load()
		timeline = append(timeline, report.Second{
			TS:       now.Sub(start).Seconds(),
			Acquired: t.acquired - prev.acquired,
			P99US:    sec.ValueAtQuantile(99),
			Overlaps: overlaps - prevOverlaps,
			Timeouts: t.timeouts - prev.timeouts,
			Errors:   t.errors - prev.errors,
		})
		enc, _ := report.EncodeHistogram(sec)
		intervals = append(intervals, report.Interval{StartMS: last.UnixMilli(), EndMS: now.UnixMilli(), Acquire: enc})
		progress(Progress{
			Elapsed: now.Sub(start), Total: p.cfg.Duration,
			AcquireRate: float64(t.acquired-prev.acquired) / now.Sub(last).Seconds(),
			P99US:       soFar.ValueAtQuantile(99), Overlaps: overlaps,
		})
		prev, prevOverlaps, last = t, overlaps, now
	}
	for {
		select {
		case <-ctx.Done():
		case <-end.C:
			if finish != nil {
				finish()
			}
		case now := <-tick.C:
			sample(now)
			continue
		}
		p.rec.on.Store(false) // before the last sample, so that the timeline adds up
		sample(time.Now())
		return timeline, intervals
	}
}

// result assembles the phase's Result from the recorder.
func (p *phase) result(start, end time.Time, timeline []report.Second, intervals []report.Interval) report.Result {
	h := p.rec.merged()
	var t totals
	for _, s := range p.rec.shards {
		s.mu.Lock()
		t.acquired, t.timeouts, t.errors = t.acquired+s.acquired, t.timeouts+s.timeouts, t.errors+s.errors
		s.mu.Unlock()
	}
	window := end.Sub(start)
	r := report.Result{
		Strategy:    p.name,
		Wait:        p.cfg.Wait.String(),
		TTLMS:       p.cfg.TTL.Milliseconds(),
		WatchdogMS:  p.cfg.Watchdog.Resolve(p.cfg.TTL).Milliseconds(),
		DurationS:   window.Seconds(),
		Workers:     len(p.rec.perWorker),
		Keys:        len(p.keys),
		Acquired:    t.acquired,
		OfferedRate: p.cfg.Rate,
		Timeouts:    t.timeouts,
		Errors:      t.errors,
		Dropped:     p.rec.dropped.Load(),
		LatencyUS: report.Latencies{
			Acquire: report.PercentilesOf(h[mAcquire]),
			Release: report.PercentilesOf(h[mRelease]),
			Handoff: report.PercentilesOf(h[mHandoff]),
			Hold:    report.PercentilesOf(h[mHold]),
		},
		Safety: report.Safety{
			Overlaps:    p.rec.overlaps.Load(),
			StaleFences: p.rec.staleFences.Load(),
			LostLeases:  p.rec.lostLeases.Load(),
		},
		Fairness:  p.rec.fairness(),
		Timeline:  timeline,
		Intervals: intervals,
	}
	if window > 0 {
		r.AcquireRate = float64(t.acquired) / window.Seconds()
	}
	r.Histograms.Acquire, _ = report.EncodeHistogram(h[mAcquire])
	r.Histograms.Release, _ = report.EncodeHistogram(h[mRelease])
	r.Histograms.Handoff, _ = report.EncodeHistogram(h[mHandoff])
	r.Histograms.Hold, _ = report.EncodeHistogram(h[mHold])
	if e := p.firstErr.Load(); e != nil {
		r.Notes = append(r.Notes, "first error: "+*e)
	}
	return r
}

// fillCost divides the window's INFO deltas, over the masters only (a replica re-runs what
// its master ran), by the acquisitions.
func (p *phase) fillCost(r *report.Result, before, after []target.ServerStats) {
	var b, a []target.ServerStats
	for i := range min(len(before), len(after)) {
		if before[i].Role == "master" {
			b, a = append(b, before[i]), append(a, after[i])
		}
	}
	c := target.CostBetween(b, a)
	r.Redis = report.RedisCost{
		Commands: c.Commands, CPUUS: c.CPUUS, NetInBytes: c.NetIn, NetOutBytes: c.NetOut,
		Measured: len(b) > 0,
	}
	if c.Elapsed > 0 {
		r.Redis.CPUPercent = float64(c.CPUUS) / float64(c.Elapsed.Microseconds()) * 100
	}
	if n := float64(r.Acquired); n > 0 {
		r.Redis.CommandsPerAcquire = float64(c.Commands) / n
		r.Redis.CPUUSPerAcquire = float64(c.CPUUS) / n
		r.Redis.BytesPerAcquire = float64(c.NetIn+c.NetOut) / n
	}
}

// cleanup deletes the phase's keys (locks left behind, fence counters, queues), bounded in
// time: a benchmark must not leave garbage in someone's Redis.
func (p *phase) cleanup() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, n := range p.nodes {
		_ = deleteByPrefix(ctx, n.Client, p.prefix)
	}
}

func deleteByPrefix(ctx context.Context, c rueidis.Client, prefix string) error {
	var cursor uint64
	for {
		e, err := c.Do(ctx, c.B().Scan().Cursor(cursor).Match(prefix+"*").Count(1000).Build()).AsScanEntry()
		if err != nil {
			return err
		}
		if len(e.Elements) > 0 {
			for _, k := range e.Elements { // UNLINK one by one: cluster keys live in many slots
				c.Do(ctx, c.B().Unlink().Key(k).Build())
			}
		}
		if cursor = e.Cursor; cursor == 0 {
			return nil
		}
	}
}

// worker is one goroutine's state; nothing in it is shared.
type worker struct {
	id    int
	owner string // unique across processes: lockbench's process id plus the worker number
	rng   *rand.Rand
	pick  func() int
}

// processID distinguishes this process's owners from another lockbench's on the same keys.
var processID = fmt.Sprintf("lb%06x", rand.Uint32()&0xffffff)

func (p *phase) newWorker(id int) *worker {
	r := rand.New(rand.NewPCG(p.seed, uint64(id)))
	return &worker{id: id, owner: processID + ":" + strconv.Itoa(id), rng: r, pick: p.cfg.KeyDist.picker(len(p.keys), r)}
}

func (p *phase) closedWorker(ctx context.Context, id int) {
	w := p.newWorker(id)
	for ctx.Err() == nil {
		p.cycle(ctx, w, w.pick(), time.Now())
	}
}

func (p *phase) openWorker(ctx context.Context, id int, arrivals <-chan time.Time) {
	w := p.newWorker(id)
	for {
		select {
		case <-ctx.Done():
			return
		case due := <-arrivals:
			p.cycle(ctx, w, w.pick(), due)
			if p.measured(due) {
				p.inflight.Add(-1)
			}
		}
	}
}

// pace issues open-loop arrivals on schedule. An arrival goes to a worker that is free at
// that moment or is dropped: it is never queued, which would hide the wait.
//
// It stops with the last arrival due before the window's end, even if that one is sent late.
func (p *phase) pace(ctx context.Context, start time.Time, arrivals chan<- time.Time) {
	defer close(p.paced)
	pacer := ConstantPacer{Rate: p.cfg.Rate}
	for hits := uint64(0); ; hits++ {
		due := start.Add(pacer.Due(hits))
		if !due.Before(p.winEnd) {
			return
		}
		if wait := pacer.Pace(time.Since(start), hits); wait > 0 && !sleepCtx(ctx, wait) {
			return
		}
		measured := p.measured(due)
		if measured {
			p.inflight.Add(1)
		}
		select {
		case arrivals <- due:
			continue
		case <-ctx.Done():
		default:
			if measured {
				p.rec.dropped.Add(1)
			}
		}
		if measured {
			p.inflight.Add(-1)
		}
		if ctx.Err() != nil {
			return
		}
	}
}

// awaitInflight waits, once the window's time is up, for the pacer to send the arrivals due
// in it and for those to finish; bounded by the acquire timeout plus slack.
func (p *phase) awaitInflight() {
	deadline := time.Now().Add(p.cfg.AcquireTimeout + 2*time.Second + 4*p.cfg.Hold.MeanDuration())
	<-p.paced
	for p.inflight.Load() > 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
}

// measured reports whether a cycle intended to start at t counts: in the closed loop every
// cycle does while recording is on; in the open loop only arrivals due in the window.
func (p *phase) measured(t time.Time) bool {
	return p.cfg.Rate == 0 || !t.Before(p.winStart)
}

// cycle is one lock cycle: acquire, enter the resource, hold, leave, release. Latencies
// count from intended: the moment the acquire was due (open loop) or began (closed loop).
func (p *phase) cycle(ctx context.Context, w *worker, k int, intended time.Time) {
	key := p.keys[k]
	m := p.measured(intended)
	actx, cancel := context.WithTimeout(ctx, p.cfg.AcquireTimeout)
	lease, err := p.strat.Acquire(actx, key, w.owner)
	cancel()
	got := time.Now()
	if err != nil {
		p.acquireFailed(ctx, w, err, m)
		return
	}

	ks := &p.state[k]
	handoffUS := int64(-1)
	if d, ok := ks.handoff(w.id, int64(got.Sub(p.origin))); ok {
		handoffUS = d.Microseconds()
	}
	fence := lease.Fence()
	if ks.enter() {
		p.count(m, &p.rec.overlaps)
	}
	p.checkWrite(ks, fence, m)
	nested := p.reenter(ctx, w, key, m)
	sleepCtx(ctx, p.cfg.Hold.sample(w.rng))
	p.checkWrite(ks, fence, m) // a holder paused past its lease writes last: is it refused?
	for i := len(nested) - 1; i >= 0; i-- {
		p.release(ctx, w, nested[i], m)
	}
	ks.exit()

	relStart := time.Now()
	p.release(ctx, w, lease, m)
	relEnd := time.Now()
	ks.released(w.id, int64(relEnd.Sub(p.origin)))
	if m {
		p.rec.cycle(w.id, got.Sub(intended).Microseconds(), handoffUS,
			relStart.Sub(got).Microseconds(), relEnd.Sub(relStart).Microseconds())
	}
}

// count adds to a rare-event counter when the cycle is measured.
func (p *phase) count(m bool, c *atomic.Uint64) {
	if m {
		p.rec.count(c)
	}
}

// checkWrite is the protected resource receiving a write carrying fence.
func (p *phase) checkWrite(ks *keyState, fence uint64, m bool) {
	if !ks.write(fence) {
		p.count(m, &p.rec.staleFences)
	}
}

// reenter takes the held key again Reentry times, for reentrant strategies.
func (p *phase) reenter(ctx context.Context, w *worker, key string, m bool) []strategies.Lease {
	if p.cfg.Reentry == 0 || !p.info.Reentrant {
		return nil
	}
	nested := make([]strategies.Lease, 0, p.cfg.Reentry)
	for range p.cfg.Reentry {
		actx, cancel := context.WithTimeout(ctx, p.cfg.AcquireTimeout)
		l, err := p.strat.Acquire(actx, key, w.owner)
		cancel()
		if err != nil {
			p.acquireFailed(ctx, w, err, m)
			break
		}
		p.count(m, &p.rec.reentries)
		nested = append(nested, l)
	}
	return nested
}

// release gives a lease up. Once the phase is over the release still happens — a benchmark
// must not leave locks behind — but bounded in time.
func (p *phase) release(ctx context.Context, w *worker, l strategies.Lease, m bool) {
	rctx := context.Background()
	if ctx.Err() != nil {
		var cancel context.CancelFunc
		rctx, cancel = context.WithTimeout(rctx, 2*time.Second)
		defer cancel()
	}
	switch err := l.Release(rctx); {
	case err == nil:
	case errors.Is(err, strategies.ErrNotOwner):
		p.count(m, &p.rec.lostLeases)
	default:
		p.failed(w, err, m)
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
	default:
		p.failed(w, err, m)
		sleepCtx(ctx, 10*time.Millisecond) // a failing Redis must not become a hot loop
	}
}

func (p *phase) failed(w *worker, err error, m bool) {
	if m {
		p.rec.failure(w.id)
	}
	msg := err.Error()
	p.firstErr.CompareAndSwap(nil, &msg)
}

// sleepCtx sleeps d unless ctx ends first; it reports whether the full time passed.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
