package workload

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/strategies"
)

// Progress is the live state of a run, reported once a second.
type Progress struct {
	Phase, Phases int // 1-based
	Strategy      string
	Label         string
	Warmup        bool          // in the unrecorded warm-up
	Elapsed       time.Duration // into the warm-up or the measured window
	Total         time.Duration // length of the warm-up or the measured window
	AcquireRate   float64       // acquisitions per second over the last second
	P99US         int64         // acquire p99 over the window so far
	Overlaps      uint64        // in the window so far

	// Second is what the measured window saw since the previous report (zero in the
	// warm-up), for live exports (--metrics-addr, --live): summed over a phase's reports,
	// its counts are the phase's totals.
	Second ProgressSecond
}

// StartUp is how far a phase is in starting its workers. A phase starts every worker
// (goroutine and state) and parks it before its warm-up begins, then releases them all at
// once, so that a large fleet's start-up takes nothing from the warm-up or the measured
// window. While that lasts more than a second it is reported once a second, and once more
// when done; a phase that starts within a second reports only that last one.
type StartUp struct {
	Phase, Phases   int // 1-based
	Strategy, Label string

	Workers int           // to start
	Started int           // made and parked so far; Workers when Done, unless interrupted
	Elapsed time.Duration // since the start-up began
	Done    bool          // every worker is parked, and the phase releases them now
}

// ProgressSecond is one interval of a measured window, about a second long (the last one
// ends with the window and may be shorter). It is built from what the collector merges
// once a second anyway: reporting it costs the measured path nothing.
type ProgressSecond struct {
	// Duration is the interval's length.
	Duration time.Duration
	// Acquired, Timeouts, Errors, Overlaps and Renewals are counted in the interval.
	Acquired, Timeouts, Errors, Overlaps, Renewals uint64
	// P50US and P99US are acquire latency percentiles of the interval, in µs (0 without
	// acquisitions).
	P50US, P99US int64
	// Latency holds the interval's acquire latencies, in µs. The collector reuses it: read
	// it (or Merge it into a histogram of your own) during the Progress call only.
	Latency *hdrhistogram.Histogram
}

// Faults is what the fault layer does to one phase; package faults implements it. Its
// methods are called concurrently.
type Faults interface {
	// Hooks are set on the phase's strategy (e.g. a crash between SETNX and EXPIRE, renewals
	// frozen with their holder).
	Hooks() strategies.Hooks
	// WorkerContext is the context worker runs under; a fault may give it a skewed clock.
	WorkerContext(ctx context.Context, worker int) context.Context
	// Stall runs inside worker's critical section after its hold and blocks as long as a
	// fault stalls that holder.
	Stall(ctx context.Context, worker int, owner string)
	// StallWrite runs between the holder's lease check (--on-lost abort) and its last write
	// to the resource, and blocks as long as a fault placed there stalls that holder: the
	// window no client-side check can close.
	StallWrite(ctx context.Context, worker int, owner string)
	// Crash runs inside worker's critical section after the stalls and reports whether
	// owner dies there, holding its lock: it never releases, and the fault stops its
	// renewals (holder-crash). The worker goes on as a new client with a new owner.
	Crash(worker int, owner string) bool
	// Run plays the scheduled faults, their times relative to windowStart, reporting each
	// event through emit. It returns when ctx ends, after undoing what it did (servers
	// resumed or restarted, proxies healed), so the next phase finds a healthy target.
	Run(ctx context.Context, windowStart time.Time, emit func(report.Event))
}

// Options are the run's observers and collaborators.
type Options struct {
	// Progress, when set, is called from the collector goroutine once a second.
	Progress func(Progress)
	// StartUp, when set, sees each phase's start of its workers, before the warm-up: once a
	// second while it lasts, and once when it is done (see StartUp).
	StartUp func(StartUp)
	// Faults builds the fault injectors of a phase that has fault specs. A phase with
	// faults and no Faults builder is an error.
	Faults func(Phase) (Faults, error)
	// NoCost skips the cost readings, for a service that cannot report its cost (the
	// embedded Redis has no INFO): the results then say the cost was not measured.
	NoCost bool

	// drainCut, for tests, is called when a phase's drain cancels the acquires still
	// running after drainGrace.
	drainCut func()
}

// Run drives each phase against the lock service b (services/redis's Backend for Redis) and
// returns one Result per phase that started. cfg is validated unless Validate accepted it. When ctx ends mid-run, the interrupted phase's Result
// covers what ran and is marked interrupted, and Run returns ctx's error alongside the
// results.
func Run(ctx context.Context, cfg Config, b Backend, o Options) ([]report.Result, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	// Build every strategy once before running anything: a bad combination with the target
	// (redlock without masters) fails the run at once, not after minutes of earlier phases.
	for _, ph := range cfg.Phases {
		so, err := strategyOptions(ph, b, strategies.Hooks{})
		if err != nil {
			return nil, err
		}
		s, err := strategies.New(ph.Strategy, so)
		if err != nil {
			return nil, err
		}
		_ = s.Close()
		if len(ph.Faults) > 0 && o.Faults == nil {
			return nil, fmt.Errorf("phase %s has faults but no fault layer was given", ph.Strategy)
		}
	}
	var results []report.Result
	for i, ph := range cfg.Phases {
		p, err := newPhase(i, ph, &cfg, b, o)
		if err != nil {
			return results, err
		}
		r, err := p.run(ctx, len(cfg.Phases), o)
		results = append(results, r)
		if err != nil {
			return results, err
		}
	}
	return results, nil
}

// strategyOptions are the options ph's strategy is built with: the phase's settings, and
// the service's part from the Backend it runs on (see backendFor).
func strategyOptions(ph Phase, b Backend, hooks strategies.Hooks) (strategies.Options, error) {
	o := strategies.Options{Params: ph.Lock, Permits: ph.Permits, Hooks: hooks} // ph.Lock as Validate settled it
	info, ok := strategies.Lookup(ph.Strategy)
	if !ok {
		return o, strategies.Check(ph.Strategy, o) // names the valid strategies
	}
	svc, err := backendFor(b, info)
	if err != nil {
		return o, err
	}
	svc.Configure(&o)
	return o, nil
}

// phase is one strategy's run.
type phase struct {
	index   int
	ph      Phase
	call    string  // the Redisson call the strategy's acquires are (strategies.LeaseReporter), or ""
	backend Backend // for the barrier and the clock
	service Backend // the one the strategy runs on: backend, or one of its Router
	cfg     *Config
	strat   strategies.Strategy
	info    strategies.Info
	capa    capacity                // how many the oracle lets inside one key
	shared  strategies.SharedLocker // strat, when the phase reads (--read-ratio)
	sets    strategies.SetLocker    // strat, when the phase locks sets (--lock-set)
	// chain: a closed loop of one key a cycle, whose strategy chains (strategies.Chainer):
	// a worker's release carries its next acquire (worker.next).
	chain   bool
	faults  Faults     // nil without faults
	crashes *crashes   // the holders that died (holder-crash); nil without faults
	scope   Scope      // the servers and keys of the phase: its cost, stuck locks and cleanup
	prefix  string     // every key of the phase starts with it
	state   []keyState // per key: its name, built once, and the oracle's view of it
	rec     *recorder
	holdErr holdErrors // how late the measured holds ended
	origin  time.Time  // monotonic origin of keyState timestamps
	seed    uint64

	// Open loop: the measured window is the arrivals due in [winStart, winEnd), however late
	// they are sent or finish (wrk2's definition: lateness is latency, not lost rate).
	winStart, winEnd time.Time
	sched            *schedule
	inflight         atomic.Int64 // in-window arrivals claimed and not finished

	errs     errorCounts // failed lock-server calls by kind, and the first of each
	channels string      // the ACL channel right the strategy needs, for a denied one's hint

	// The first error after which the strategy cannot go on (strategies.IsFatal): closing
	// fatal ends the phase at once. fatalErr is written before, and read after, the close.
	fatal     chan struct{}
	fatalOnce sync.Once
	fatalErr  error

	// The workers' acquire contexts, ended together when their kill context ends
	// (startWorkers); stopEnds undoes that registration.
	actxs    []*acquireCtx
	stopEnds func() bool

	// Multi-process runs: every critical section, and the clock against the backend's
	// reference clock at the start and end meetings; nil and zero otherwise.
	hist          *histories
	clockAtStart  clockSync
	clockAtFinish clockSync

	eventsMu sync.Mutex
	events   []report.Event
}

func newPhase(index int, ph Phase, cfg *Config, b Backend, o Options) (*phase, error) {
	p := &phase{
		index: index, ph: ph, cfg: cfg, backend: b,
		prefix: cfg.KeyPrefix + strconv.Itoa(index+1) + ":" + ph.Strategy + ":",
		state:  make([]keyState, ph.Keys),
		origin: time.Now(),
		seed:   rand.Uint64(),
		rec:    newRecorder(ph.Concurrency()),
		fatal:  make(chan struct{}),
	}
	var hooks strategies.Hooks
	if len(ph.Faults) > 0 {
		f, err := o.Faults(ph)
		if err != nil {
			return nil, err
		}
		p.faults, hooks = f, f.Hooks()
		p.crashes = newCrashes(ph.Keys)
	}
	so, err := strategyOptions(ph, b, hooks)
	if err != nil {
		return nil, err
	}
	strat, err := strategies.New(ph.Strategy, so)
	if err != nil {
		return nil, err
	}
	p.strat, p.info = strat, strat.Info()
	p.channels = channelRight(p.info.Source)
	if lr, ok := strat.(strategies.LeaseReporter); ok {
		// The lease the strategy runs with (Redisson's lock() default), for the holders'
		// deadlines, the crash checks and the result.
		ttl, renewal, call := lr.Lease()
		if ttl > 0 {
			p.ph.TTL, p.ph.Watchdog = strategies.TTLOf(ttl), strategies.Watchdog{Interval: renewal}
		}
		p.call = call
	}
	p.capa = capacityOf(p.info, ph.Permits)
	var ok bool
	if p.shared, ok = strat.(strategies.SharedLocker); !ok && ph.ReadRatio > 0 {
		_ = strat.Close()
		return nil, &ConfigError{Field: "read-ratio", Value: fmt.Sprint(ph.ReadRatio), Reason: ph.Strategy + " takes no shared holds"}
	}
	if p.sets, ok = strat.(strategies.SetLocker); !ok && ph.LockSet > 1 {
		_ = strat.Close()
		return nil, &ConfigError{Field: "lock-set", Value: strconv.Itoa(ph.LockSet), Reason: ph.Strategy + " takes no lock sets"}
	}
	if c, ok := strat.(strategies.Chainer); ok && c.Chains() {
		p.chain = ph.Rate == 0 && ph.LockSet <= 1 && ph.ReadRatio == 0
	}
	if p.service, err = backendFor(b, p.info); err != nil {
		return nil, err
	}
	// Each key carries its own hash tag: keys spread over a cluster's slots, and a strategy's
	// derived keys (queue, fence counter) share their lock's slot.
	for i := range p.state {
		p.state[i].key = p.prefix + "{" + strconv.Itoa(i) + "}"
	}
	if cfg.Barrier != nil {
		p.hist = newHistories(ph.Concurrency())
	}
	p.scope = p.service.Scope(p.info, p.prefix)
	return p, nil
}

// run executes the phase: warm-up, measured window, drain. The strategy is closed and the
// phase's keys deleted before it returns.
func (p *phase) run(ctx context.Context, phases int, o Options) (report.Result, error) {
	defer p.strat.Close()
	defer func() {
		if p.leader() {
			p.cleanup()
		}
		stage("cleaned-up")
	}()
	if p.crashes != nil {
		defer p.crashes.bury(context.WithoutCancel(ctx)) // after the stuck locks are counted
	}
	// Workers run under work; their acquires end only with kill (see drain). Every one is
	// started and parked before the phase's clock starts (startWorkers), and before the
	// other processes of a multi-machine run are met: however long a large fleet takes to
	// start, the warm-up and the window are the load's alone.
	work, stopWork := context.WithCancel(ctx)
	defer stopWork()
	// An acquire sleeping between two attempts when work ends stops waiting then
	// (strategies.WithWaitEnd): nothing is cut, and the drain does not wait out its sleep.
	work = strategies.WithWaitEnd(work, work.Done())
	kill, killWork := context.WithCancel(context.WithoutCancel(ctx))
	defer killWork()
	var workers sync.WaitGroup
	startUp := func(s StartUp) {
		if o.StartUp != nil {
			s.Phase, s.Phases, s.Strategy, s.Label = p.index+1, phases, p.ph.Strategy, p.ph.Label
			o.StartUp(s)
		}
	}
	stage("phase")
	release, err := p.startWorkers(ctx, work, kill, &workers, startUp)
	stage("started")
	defer p.stopEnds()  // runs before killWork: the workers are done by then
	abandon := func() { // the parked workers end without running a cycle
		stopWork()
		release()
		workers.Wait()
	}
	if err != nil {
		abandon()
		r := p.result(time.Now(), time.Now(), nil, nil)
		r.Interrupted = true
		return r, err
	}
	if err := p.meet(ctx, "start"); err != nil {
		abandon()
		return p.result(time.Now(), time.Now(), nil, nil), err
	}
	if p.hist != nil {
		var err error
		if p.clockAtStart, err = syncClock(ctx, p.backend, p.origin); err != nil {
			abandon()
			return p.result(time.Now(), time.Now(), nil, nil), err
		}
	}

	start := time.Now()
	p.winStart = start.Add(p.cfg.warmup())
	p.winEnd = p.winStart.Add(p.cfg.Duration)
	open := p.ph.Rate > 0
	var finish func() // runs when the window's time is up, before the last sample
	if open {
		p.sched = newSchedule(start, p.ph.Rate, p.winStart, p.winEnd)
		p.rec.on.Store(true) // arrivals due before winStart are not measured; see measured
		finish = p.awaitInflight
	}
	release() // every worker begins now, the schedule and the window set

	// Faults play from the phase's start (their times are relative to the window) until
	// the window closes; stopping them restores the target before the workers drain.
	stopFaults := func() {}
	if p.faults != nil {
		fctx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			p.faults.Run(fctx, p.winStart, p.emit)
		}()
		stopFaults = func() { cancel(); <-done }
	}
	// The phase ends without cutting an acquire in half: the workers stop taking new
	// cycles and cut their holds short, the acquires in flight finish (or time out), those
	// sleeping between two attempts stop waiting (strategies.WithWaitEnd), and their locks
	// are released. Only workers still busy after drainGrace are cancelled.
	drain := func() {
		p.rec.on.Store(false)
		stopFaults()
		stopWork()
		done := make(chan struct{})
		go func() { workers.Wait(); close(done) }()
		grace := time.NewTimer(min(p.cfg.AcquireTimeout, drainGrace))
		defer grace.Stop()
		select {
		case <-done:
		case <-grace.C:
			stage("drain-cut")
			if o.drainCut != nil {
				o.drainCut()
			}
			killWork()
			<-done
		}
		stage("drained")
	}

	progress := func(pr Progress) {
		if o.Progress != nil {
			pr.Phase, pr.Phases, pr.Strategy, pr.Label = p.index+1, phases, p.ph.Strategy, p.ph.Label
			o.Progress(pr)
		}
	}
	if !p.warmup(ctx, start, progress) {
		drain()
		r := p.result(start, start, nil, nil)
		if err := p.fatalError(); err != nil {
			r.Notes = append(r.Notes, "phase ended in the warm-up: "+err.Error())
			return r, err
		}
		r.Interrupted = true
		return r, ctx.Err()
	}

	stage("warmed-up")
	var stopCost func(context.Context) (Cost, error)
	var costErr error
	if !o.NoCost {
		stopCost, costErr = p.scope.StartCost(ctx)
	}
	stage("cost-probe")
	statsBefore := p.strat.Stats()
	clientCost := startClientCost(open) // lockbench's own CPU over the window (issue 32)
	p.rec.on.Store(true)
	windowStart := time.Now()
	// The timeline counts from winStart, as the fault events do: one clock for both. Its
	// intervals run from windowStart to windowEnd, the last sample: they add up to the
	// window the result reports, however late a loaded machine runs the collector.
	from := windowStart
	if open {
		from = p.winStart // arrivals due from winStart on are measured (see measured)
	}
	timeline, intervals, windowEnd := p.collect(ctx, p.winStart, from, progress, finish)
	client := clientCost()
	stage("window")
	if open && ctx.Err() == nil {
		windowStart, windowEnd = p.winStart, p.winEnd
	}
	var cost Cost
	unanswered := false // the lock server did not answer the cost read: frozen or gone
	if !o.NoCost && costErr == nil {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), p.probeTimeout())
		cost, costErr = stopCost(cctx)
		cancel()
		// Without faults nothing was meant to stop the server: a read it left unanswered is
		// the run's evidence that the workload stalled (report.Verdict). With faults, the
		// fault plan says what stopped it.
		unanswered = costErr != nil && len(p.ph.Faults) == 0 && p.errs.probeFailed(costErr)
	}
	stage("cost-read")
	drain()

	r := p.result(windowStart, windowEnd, timeline, intervals)
	fillClientCost(&r, client)
	statsAfter := p.strat.Stats()
	r.Renewals = statsAfter.Renewals - statsBefore.Renewals
	if n := statsAfter.Unreplicated - statsBefore.Unreplicated; n > 0 {
		r.Notes = append(r.Notes, fmt.Sprintf("%d grants not confirmed by %d replica(s) in time and given back (--wait-replicas)", n, p.ph.WaitReplicas))
	}
	switch {
	case o.NoCost:
	case costErr != nil:
		r.Notes = append(r.Notes, p.service.Name()+" cost not measured: "+firstLine(costErr.Error()))
	default:
		fillCost(&r, cost)
	}
	if r.Acquired == 0 {
		r.Notes = append(r.Notes, p.whyNothingAcquired(r, cost))
	}
	if err := p.meet(ctx, "end"); err != nil && ctx.Err() == nil {
		r.Notes = append(r.Notes, err.Error())
	}
	if p.leader() {
		if unanswered {
			r.Notes = append(r.Notes, "stuck locks not counted: "+p.service.Name()+" did not answer")
		} else {
			r.Safety.StuckKeys = p.stuckKeys() // counted once, not once per process
		}
		r.Verdict = report.Verdict(&r)
	}
	if p.crashes != nil && p.capa.semaphore {
		// After the drain and the end meeting: every live holder has given its permit back.
		leaked, err := p.crashes.leaked(context.WithoutCancel(ctx), p)
		if err != nil {
			r.Notes = append(r.Notes, "leaked permits not counted: "+firstLine(err.Error()))
		}
		r.Safety.LeakedPermits = leaked
		r.Verdict = report.Verdict(&r)
	}
	if p.crashes != nil {
		// After the drain: a key nobody took again by now is blocked for all the phase saw.
		r.Safety.BlockedAfterCrash = p.crashes.blocked(int64(time.Since(p.origin)))
		if n := crashNote(r.Safety.CrashedHolders, r.Safety.BlockedAfterCrash); n != "" {
			r.Notes = append(r.Notes, n)
		}
	}
	if p.hist != nil {
		p.attachHistory(context.WithoutCancel(ctx), &r)
	}
	stage("result")
	if ctx.Err() != nil {
		r.Interrupted = true
		return r, ctx.Err()
	}
	if err := p.fatalError(); err != nil {
		r.Notes = append(r.Notes, fmt.Sprintf("phase ended after %.1fs of its %s window: %s", r.DurationS, p.cfg.Duration, err))
		return r, err
	}
	return r, nil
}

// giveUp ends the phase at once on err, an error after which its strategy cannot go on
// (strategies.IsFatal): the first such error is the phase's, and the run's.
func (p *phase) giveUp(err error) {
	p.fatalOnce.Do(func() {
		p.fatalErr = err
		close(p.fatal)
	})
}

// fatalError is the error giveUp ended the phase on, or nil.
func (p *phase) fatalError() error {
	select {
	case <-p.fatal:
		return p.fatalErr
	default:
		return nil
	}
}

// drainGrace bounds how long the phase's end waits for the acquires in flight, beyond which
// they are cancelled (and setnx-expire may be cut between its two commands after all): a
// long queue of waiters on one key, or an acquire timeout of minutes, must not hold up the
// run.
const drainGrace = 3 * time.Second

// probeTimeout bounds the cost read at the window's end, lockbench's own call to the lock
// server: a frozen server must not hold the run up for as long as the client takes to give
// up on its connection (about 10s), and a read it leaves unanswered says it was frozen.
const probeTimeout = 5 * time.Second

// probeWait is how much longer the cost read at the window's end may take per worker: it
// shares the lock server's connections with the workers, and waits behind the commands
// they have in flight, one each at most — with 100,000 workers on a loaded 2-core machine,
// more than the 5 s a frozen server is given, which made a busy run read "inconclusive".
const probeWait = 50 * time.Microsecond

// probeTimeout bounds the phase's cost read at the window's end.
func (p *phase) probeTimeout() time.Duration {
	return probeTimeout + time.Duration(p.ph.Concurrency())*probeWait
}

// meet waits for the other processes of a multi-machine run at this phase's point.
func (p *phase) meet(ctx context.Context, point string) error {
	if p.cfg.Barrier == nil {
		return nil
	}
	return p.cfg.Barrier.meet(ctx, p.backend, strconv.Itoa(p.index+1)+":"+point)
}

// leader reports whether this process owns the phase's shared chores (stuck keys, cleanup).
func (p *phase) leader() bool { return p.cfg.Barrier == nil || p.cfg.Barrier.Node == 1 }

func (p *phase) workerContext(ctx context.Context, w int) context.Context {
	if p.faults == nil {
		return ctx
	}
	return p.faults.WorkerContext(ctx, w)
}

// emit records a fault event, timed relative to the window's start.
func (p *phase) emit(e report.Event) {
	p.eventsMu.Lock()
	defer p.eventsMu.Unlock()
	p.events = append(p.events, e)
}

// warmup lets the workers run unrecorded for the warm-up time; false when ctx ended.
func (p *phase) warmup(ctx context.Context, start time.Time, progress func(Progress)) bool {
	if p.cfg.Warmup <= 0 {
		return true
	}
	end := time.NewTimer(time.Until(p.winStart))
	defer end.Stop()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-p.fatal:
			return false
		case <-end.C:
			return true
		case <-tick.C:
			progress(Progress{Warmup: true, Elapsed: time.Since(start), Total: p.cfg.warmup()})
		}
	}
}

// collect runs the measured window, which recording opened at from: once a second it
// merges the shards' last second into the timeline (its times count from start) and
// reports progress. When the window's time is up — the duration from from, however late
// a loaded machine ran the warm-up's end and the cost probe (100,000 workers' commands
// ahead of it once made a 1s window 40µs long) — finish (if any) runs while the sampling
// goes on; collect returns after it, or when ctx ends, with the time of the last sample.
func (p *phase) collect(ctx context.Context, start, from time.Time, progress func(Progress), finish func()) ([]report.Second, []report.Interval, time.Time) {
	end := time.NewTimer(time.Until(from.Add(p.cfg.Duration)))
	defer end.Stop()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()

	sec, soFar := report.NewHistogram(), report.NewHistogram()
	var timeline []report.Second
	var intervals []report.Interval
	var prev totals
	var prevOverlaps uint64
	prevRenewals := p.strat.Stats().Renewals
	last := from
	sample := func(now time.Time) {
		t := p.rec.tick(sec)
		soFar.Merge(sec)
		overlaps := p.rec.overlaps.Load()
		renewals := p.strat.Stats().Renewals
		p99 := sec.ValueAtQuantile(99)
		timeline = append(timeline, report.Second{
			TS:       now.Sub(start).Seconds(),
			Acquired: t.acquired - prev.acquired,
			P99US:    p99,
			Overlaps: overlaps - prevOverlaps,
			Timeouts: t.timeouts - prev.timeouts,
			Errors:   t.errors - prev.errors,
		})
		intervals = append(intervals, p.rec.interval(sec, last, now))
		progress(Progress{
			Elapsed: now.Sub(start), Total: p.cfg.Duration,
			AcquireRate: float64(t.acquired-prev.acquired) / now.Sub(last).Seconds(),
			P99US:       soFar.ValueAtQuantile(99), Overlaps: overlaps,
			Second: ProgressSecond{
				Duration: now.Sub(last),
				Acquired: t.acquired - prev.acquired, Timeouts: t.timeouts - prev.timeouts, Errors: t.errors - prev.errors,
				Overlaps: overlaps - prevOverlaps, Renewals: renewals - prevRenewals,
				P50US: sec.ValueAtQuantile(50), P99US: p99,
				Latency: sec,
			},
		})
		prev, prevOverlaps, prevRenewals, last = t, overlaps, renewals, now
	}
	var finished chan struct{} // closed when finish has returned; nil until the time is up
	for {
		select {
		case <-ctx.Done():
		case <-p.fatal: // the strategy cannot go on (giveUp)
		case <-end.C:
			if finish == nil {
				break
			}
			finished = make(chan struct{})
			go func() { finish(); close(finished) }()
			continue
		case <-finished:
		case now := <-tick.C:
			sample(now)
			continue
		}
		p.rec.on.Store(false) // before the last sample, so that the timeline adds up
		now := time.Now()
		sample(now)
		return timeline, intervals, now
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
		Strategy:    p.ph.Strategy,
		Label:       p.ph.Label,
		ParamValue:  p.ph.ParamValue,
		Wait:        waitOf(p.info, p.ph.Wait),
		Own:         ownOf(p.info),
		Source:      p.info.Source,
		TTLMS:       p.ph.TTL.Milliseconds(),
		WatchdogMS:  p.ph.Watchdog.Resolve(p.ph.TTL.Duration()).Milliseconds(),
		DurationS:   window.Seconds(),
		Workers:     p.ph.Concurrency(),
		Keys:        len(p.state),
		Capacity:    p.info.Capacity,
		Acquired:    t.acquired,
		OfferedRate: p.ph.Rate,
		Timeouts:    t.timeouts,
		Errors:      t.errors,
		Dropped:     p.sched.droppedSoFar(),
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

			UnsafeReentries:  p.rec.unsafeReentries.Load(),
			StaleWrites:      p.rec.staleWrites.Load(),
			FenceRegressions: p.rec.fenceRegressions.Load(),
			FenceReuses:      p.rec.fenceReuses.Load(),
			Misdeletes:       p.rec.misdeletes.Load(),
			Aborted:          p.rec.aborted.Load(),
			CrashedHolders:   p.rec.crashed.Load(),
			MaxHolders:       uint64(p.rec.maxHolders.Load()),
			Fencing:          p.info.Fencing,
		},
		HoldErrorUS: p.holdErr.percentiles(),
		Fairness:    p.rec.fairness(),
		Faults:      p.ph.Faults,
		Timeline:    timeline,
		Intervals:   intervals,
	}
	if window > 0 {
		r.AcquireRate = float64(t.acquired) / window.Seconds()
	}
	switch {
	case p.capa.semaphore:
		r.Permits = p.ph.Permits
	case p.capa.rw:
		r.ReadRatio = p.ph.ReadRatio
		r.Safety.MaxReaders, r.Safety.MaxWriters = uint64(p.rec.maxReaders.Load()), uint64(p.rec.maxWriters.Load())
	case p.info.Capacity == strategies.CapacitySet:
		r.LockSet = p.ph.LockSet
	}
	if p.call != "" {
		r.Notes = append(r.Notes, "as Redisson's "+p.call)
	}
	if p.chain {
		r.Notes = append(r.Notes, chainNote)
	}
	p.errs.fill(&r)
	r.Verdict = report.Verdict(&r)
	r.Histograms.Acquire, _ = report.EncodeHistogram(h[mAcquire])
	r.Histograms.Release, _ = report.EncodeHistogram(h[mRelease])
	r.Histograms.Handoff, _ = report.EncodeHistogram(h[mHandoff])
	r.Histograms.Hold, _ = report.EncodeHistogram(h[mHold])
	r.Histograms.HoldError = p.holdErr.encoded()
	p.attachEvents(&r)
	return r
}

// attachHistory measures the clock once more, at the end meeting, and puts the phase's
// critical sections into r for report merge. Without a second measurement the first one
// serves alone; without a history, merge says the processes were not checked against
// each other.
func (p *phase) attachHistory(ctx context.Context, r *report.Result) {
	end, err := syncClock(ctx, p.backend, p.origin)
	if err != nil {
		end = clockSync{}
	}
	h, err := p.hist.history(processID, p.clockAtStart, end)
	if err != nil {
		r.Notes = append(r.Notes, "history not kept: "+err.Error())
		return
	}
	r.History = h
}

// attachEvents puts the fault events into the result and into the timeline second each
// happened in.
func (p *phase) attachEvents(r *report.Result) {
	p.eventsMu.Lock()
	events := slices.Clone(p.events)
	p.eventsMu.Unlock()
	slices.SortStableFunc(events, func(a, b report.Event) int { return cmpFloat(a.TS, b.TS) })
	r.Events = events
	for _, e := range events {
		if len(r.Timeline) == 0 {
			break
		}
		// An event after the last point happened as the window closed (a fault undone, a
		// count of what it did): it belongs to the last second.
		i := slices.IndexFunc(r.Timeline, func(s report.Second) bool { return e.TS <= s.TS })
		if i < 0 {
			i = len(r.Timeline) - 1
		}
		r.Timeline[i].Events = append(r.Timeline[i].Events, e.Fault+": "+e.What)
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
