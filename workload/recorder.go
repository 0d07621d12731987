package workload

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lockbench/lockbench/report"
)

type metric int

const (
	mAcquire metric = iota
	mRelease
	mHandoff
	mHold
	nMetrics
)

// recorder collects one phase's measurements without a global lock: a worker records into
// the shard its id maps to (a few shards per CPU, never one per worker — 10,000 workers must
// not cost 10,000 histograms), and a single collector merges the shards once a second and at
// the end. HDR histograms are not safe for concurrent use, hence a mutex per shard; workers
// of one shard rarely meet there because a lock cycle takes a round trip or more.
//
// A worker records each latency once, into its shard's histograms of the current second;
// the collector's tick moves them into the second's totals (the timeline, the .hlog
// intervals) and adds those to the window's. The window's histograms therefore exist once,
// not per shard, and the measured path pays one RecordValue per latency.
//
// Nothing is recorded while the recorder is off (warm-up, drain). The switch is read under
// the shard lock, so a tick that follows switching off sees every cycle there will be.
type recorder struct {
	on     atomic.Bool
	shards []*shard

	// Counted outside the shards: rare events.
	overlaps, staleFences, lostLeases, reentries, unsafeReentries   atomic.Uint64
	staleWrites, fenceRegressions, fenceReuses, misdeletes, aborted atomic.Uint64
	crashed                                                         atomic.Uint64

	// The most holders inside one key at once, and a rw-lock's readers and writers apart:
	// read on every entry, written only when one grows.
	maxHolders, maxReaders, maxWriters atomic.Int32

	perWorker []workerCount // acquisitions per worker, each written only by its worker

	// lastSecond holds the last tick's histograms, merged over the shards, for interval;
	// window adds up every tick's. Only the collector touches them (merged, after it).
	lastSecond, window [nMetrics]*hdrhistogram.Histogram
}

type shard struct {
	mu       sync.Mutex
	second   [nMetrics]*hdrhistogram.Histogram // latencies since the last tick
	acquired uint64
	timeouts uint64
	errors   uint64
	_        [40]byte
}

type workerCount struct {
	n uint64
	_ [56]byte
}

func newRecorder(workers int) *recorder {
	r := &recorder{
		shards:    make([]*shard, min(4*runtime.GOMAXPROCS(0), max(workers, 1))),
		perWorker: make([]workerCount, workers),
	}
	for i := range r.shards {
		s := &shard{}
		for m := range s.second {
			s.second[m] = report.NewHistogram()
		}
		r.shards[i] = s
	}
	for m := range r.lastSecond {
		r.lastSecond[m], r.window[m] = report.NewHistogram(), report.NewHistogram()
	}
	return r
}

// cycle records one completed lock cycle of worker w. Latencies are in µs; handoffUS < 0
// means the acquire followed no release by another worker, releaseUS < 0 that the holder
// died before its release (holder-crash).
func (r *recorder) cycle(w int, acquireUS, handoffUS, holdUS, releaseUS int64) (recorded bool) {
	s := r.shards[w%len(r.shards)]
	s.mu.Lock()
	if !r.on.Load() {
		s.mu.Unlock()
		return false
	}
	record(s.second[mAcquire], acquireUS)
	if handoffUS >= 0 {
		record(s.second[mHandoff], handoffUS)
	}
	record(s.second[mHold], holdUS)
	if releaseUS >= 0 {
		record(s.second[mRelease], releaseUS)
	}
	s.acquired++
	s.mu.Unlock()
	r.perWorker[w].n++
	return true
}

// inside records who was inside a key just after an entry; rw tells a rw-lock's.
func (r *recorder) inside(in inside, rw bool) {
	raise(&r.maxHolders, in.holders)
	if rw {
		raise(&r.maxReaders, in.readers)
		raise(&r.maxWriters, in.writers)
	}
}

// raise makes a at least v.
func raise(a *atomic.Int32, v int32) {
	for {
		cur := a.Load()
		if v <= cur || a.CompareAndSwap(cur, v) {
			return
		}
	}
}

// timeout records an acquire that gave up after the acquire timeout.
func (r *recorder) timeout(w int) {
	s := r.shards[w%len(r.shards)]
	s.mu.Lock()
	if r.on.Load() {
		s.timeouts++
	}
	s.mu.Unlock()
}

// failure records a Redis or network error, and reports whether it counted (recording on).
func (r *recorder) failure(w int) bool {
	s := r.shards[w%len(r.shards)]
	s.mu.Lock()
	on := r.on.Load()
	if on {
		s.errors++
	}
	s.mu.Unlock()
	return on
}

// count adds to one of the rare-event counters while recording.
func (r *recorder) count(c *atomic.Uint64) {
	if r.on.Load() {
		c.Add(1)
	}
}

// record clamps v into the histogram's range: a value can only be out of range through a
// clock oddity, and losing it silently would be worse than pinning it.
func record(h *hdrhistogram.Histogram, v int64) {
	_ = h.RecordValue(min(max(v, 0), report.HighestUS))
}

// totals are a snapshot of the shard counters.
type totals struct{ acquired, timeouts, errors uint64 }

// tick ends a second: it moves every shard's per-second histograms into lastSecond (for
// interval) and adds them to the window's, copies the second's acquire latencies into sec
// (which it resets first), and returns the window's counters so far. Only the collector
// calls it.
func (r *recorder) tick(sec *hdrhistogram.Histogram) totals {
	for _, h := range r.lastSecond {
		h.Reset()
	}
	var t totals
	for _, s := range r.shards {
		s.mu.Lock()
		for m, h := range s.second {
			r.lastSecond[m].Merge(h)
			h.Reset()
		}
		t.acquired += s.acquired
		t.timeouts += s.timeouts
		t.errors += s.errors
		s.mu.Unlock()
	}
	for m, h := range r.lastSecond {
		r.window[m].Merge(h)
	}
	sec.Reset()
	sec.Merge(r.lastSecond[mAcquire])
	return t
}

// interval is the second from start to end for the .hlog: acquire (the histogram tick
// filled) and the release, handoff and hold histograms of the same tick, encoded. Only the
// collector calls it, after tick.
func (r *recorder) interval(acquire *hdrhistogram.Histogram, start, end time.Time) report.Interval {
	iv := report.Interval{StartMS: start.UnixMilli(), EndMS: end.UnixMilli()}
	iv.Acquire, _ = report.EncodeHistogram(acquire)
	iv.Release, _ = report.EncodeHistogram(r.lastSecond[mRelease])
	iv.Handoff, _ = report.EncodeHistogram(r.lastSecond[mHandoff])
	iv.Hold, _ = report.EncodeHistogram(r.lastSecond[mHold])
	return iv
}

// merged returns everything recorded so far: the window's histograms, and what the
// shards recorded since the last tick (nothing, once the collector's last tick has run).
// Only the collector's goroutine calls it, after its last tick.
func (r *recorder) merged() [nMetrics]*hdrhistogram.Histogram {
	var out [nMetrics]*hdrhistogram.Histogram
	for m := range out {
		out[m] = report.NewHistogram()
		out[m].Merge(r.window[m])
	}
	for _, s := range r.shards {
		s.mu.Lock()
		for m, h := range s.second {
			out[m].Merge(h)
		}
		s.mu.Unlock()
	}
	return out
}

// fairness is Jain's index over per-worker acquisitions, with the extremes. Call it after
// the workers have stopped.
func (r *recorder) fairness() report.Fairness {
	if len(r.perWorker) == 0 {
		return report.Fairness{}
	}
	f := report.Fairness{MinPerWorker: r.perWorker[0].n}
	var sum, sumSq float64
	for _, c := range r.perWorker {
		x := float64(c.n)
		sum += x
		sumSq += x * x
		f.MinPerWorker = min(f.MinPerWorker, c.n)
		f.MaxPerWorker = max(f.MaxPerWorker, c.n)
		if c.n == 0 {
			f.Starved++
		}
	}
	f.Workers, f.Sum, f.SumSquares = len(r.perWorker), sum, sumSq
	if sumSq > 0 {
		f.Jain = sum * sum / (float64(len(r.perWorker)) * sumSq)
	}
	return f
}
