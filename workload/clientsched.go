package workload

import (
	"math"
	"runtime/metrics"
	"slices"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// schedLatencies is the Go runtime's histogram of how long this process's goroutines waited
// runnable before they ran (runtime/metrics "/sched/latencies:seconds"): the client's run
// queue. CPU time does not show it. With GOMAXPROCS=1 and 1,000 workers a capacity step
// failed its p99 with lockbench at 0.4 of its one core: workers whose replies had come
// waited their turn on the one processor, and the answer read "bound by latency" where
// lockbench's scheduler was the bound.
const schedLatencies = "/sched/latencies:seconds"

// schedReading is the runtime's cumulative histogram at one moment.
type schedReading struct {
	counts  []uint64
	buckets []float64 // boundaries in seconds, len(counts)+1; the first and last may be infinite
}

func readSched() schedReading {
	s := []metrics.Sample{{Name: schedLatencies}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindFloat64Histogram {
		return schedReading{}
	}
	h := s[0].Value.Float64Histogram()
	return schedReading{counts: slices.Clone(h.Counts), buckets: slices.Clone(h.Buckets)}
}

// schedWait is the window's scheduling latency, from two readings: its p99 and mean, in µs.
// The runtime samples a share of the goroutines' transitions, so the count is not every
// wait; the distribution is. A bucket stands for its upper boundary (the p99 is never
// under-stated), an unbounded one for its finite edge. ok is false when nothing was
// sampled or the readings do not match.
func schedWait(from, to schedReading) (p99, mean float64, ok bool) {
	if len(to.counts) == 0 || len(from.counts) != len(to.counts) {
		return 0, 0, false
	}
	delta := make([]uint64, len(to.counts))
	var total uint64
	for i := range delta {
		delta[i] = to.counts[i] - from.counts[i]
		total += delta[i]
	}
	if total == 0 {
		return 0, 0, false
	}
	upper := func(i int) float64 {
		if b := to.buckets[i+1]; !math.IsInf(b, 0) {
			return b
		}
		return max(to.buckets[i], 0)
	}
	mid := func(i int) float64 {
		lo, hi := to.buckets[i], to.buckets[i+1]
		switch {
		case math.IsInf(lo, 0):
			return max(hi, 0)
		case math.IsInf(hi, 0):
			return lo
		}
		return (lo + hi) / 2
	}
	rank := uint64(math.Ceil(0.99 * float64(total)))
	var seen uint64
	var sum float64
	p99 = -1
	for i, n := range delta {
		if n == 0 {
			continue
		}
		seen += n
		sum += float64(n) * mid(i)
		if p99 < 0 && seen >= rank {
			p99 = upper(i)
		}
	}
	return p99 * 1e6, sum / float64(total) * 1e6, true
}

// A lateProbe measures how late this process runs a goroutine that sleeps until a due
// instant, as an open-loop arrival does (openWorker: claim, sleep until due, run): the
// client's own start delay, from the moment a request was due to the moment its goroutine
// ran. The runtime's scheduling latency does not show it: a sleeping goroutine is not
// runnable until its timer is run, and an idle processor runs its timers from an epoll wait
// of whole milliseconds (a 50µs sleep, as rueidis's flush delay, takes about 1ms there).
// Under GOMAXPROCS=1 a capacity step failed its p99 of 5ms with lockbench 0.1 of its one
// core busy and its goroutines' scheduling p99 under half the acquire p99: the answer read
// "bound by latency" where lockbench was the bound.
type lateProbe struct {
	stop chan struct{}
	done chan struct{}
	late *hdrhistogram.Histogram // µs; written by run only, read once it has returned
}

// lateProbePeriod is the mean sleep between the probe's wake-ups: 1,000-1,500 of them in a
// 3s capacity step. The sleeps vary (0.5-1.5 of it) so that they do not keep one phase
// against the runtime's millisecond waits. Measured in an otherwise idle test process on
// this 2-core VM under load: at a 1ms mean, 600 wake-ups a second (each sleep ended 0.6ms
// late on average) cost 30-45ms of CPU a second, the process's idle-to-running wake-ups;
// a process busy with a step's arrivals pays less per wake-up.
const lateProbePeriod = 2 * time.Millisecond

func startLateProbe() *lateProbe {
	p := newLateProbe()
	go p.run()
	return p
}

func newLateProbe() *lateProbe {
	return &lateProbe{stop: make(chan struct{}), done: make(chan struct{}), late: hdrhistogram.New(1, 3_600_000_000, 2)}
}

func (p *lateProbe) run() {
	defer close(p.done)
	seq := uint64(0x9e3779b97f4a7c15)
	for {
		seq ^= seq << 13
		seq ^= seq >> 7
		seq ^= seq << 17
		wait := lateProbePeriod/2 + time.Duration(seq%uint64(lateProbePeriod))
		due := time.Now().Add(wait)
		time.Sleep(wait)
		p.add(time.Since(due))
		select {
		case <-p.stop:
			return
		default:
		}
	}
}

// add counts one sleep that ended late by d.
func (p *lateProbe) add(d time.Duration) {
	_ = p.late.RecordValue(min(max(d.Microseconds(), 1), p.late.HighestTrackableValue()))
}

// finish stops the probe and gives the p99 of how late its sleeps ended, in µs; ok is
// false when no sleep ended.
func (p *lateProbe) finish() (p99 float64, ok bool) {
	close(p.stop)
	<-p.done
	return p.p99()
}

func (p *lateProbe) p99() (float64, bool) {
	if p.late.TotalCount() == 0 {
		return 0, false
	}
	return float64(p.late.ValueAtQuantile(99)), true
}
