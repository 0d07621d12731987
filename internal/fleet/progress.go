package fleet

// The progress wire protocol: each child writes one JSON line per once-a-second report on
// its stdout (ProgressWriter), and the parent sums the children's k-th reports into the
// fleet's k-th.

import (
	"bufio"
	"encoding/json"
	"io"
	"sync"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/workload"
)

// progress sums the children's once-a-second reports into the parent's: the k-th
// measured report of a phase from every child makes the fleet's k-th. The children's
// clocks tick apart, so a fleet second is the children's k-th seconds, not one instant.
type progress struct {
	seg     Segment
	phases  int
	emit    func(workload.Progress)
	mu      sync.Mutex
	buckets map[[2]int]*second // by (phase, k)
	seen    map[[2]int]int     // reports so far, by (phase, child)
	window  map[int]*hdrhistogram.Histogram
}

type second struct {
	pr   workload.Progress
	hist *hdrhistogram.Histogram
	n    int
}

func newProgress(seg Segment, phases int, emit func(workload.Progress)) *progress {
	if emit == nil {
		emit = func(workload.Progress) {}
	}
	return &progress{seg: seg, phases: phases, emit: emit,
		buckets: map[[2]int]*second{}, seen: map[[2]int]int{}, window: map[int]*hdrhistogram.Histogram{}}
}

// read consumes one child's progress stream until it ends.
func (a *progress) read(node int, r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		var line childProgress
		if json.Unmarshal(sc.Bytes(), &line) != nil {
			continue
		}
		a.add(node, &line)
	}
	_, _ = io.Copy(io.Discard, r)
}

func (a *progress) add(node int, line *childProgress) {
	a.mu.Lock()
	defer a.mu.Unlock()
	phase := a.seg.From + line.Phase
	if line.Warmup {
		if node == 1 {
			a.emit(workload.Progress{Phase: phase, Phases: a.phases, Strategy: line.Strategy, Label: line.Label,
				Warmup: true, Elapsed: line.Elapsed, Total: line.Total})
		}
		return
	}
	k := a.seen[[2]int{phase, node}]
	a.seen[[2]int{phase, node}] = k + 1
	b := a.buckets[[2]int{phase, k}]
	if b == nil {
		b = &second{hist: hdrhistogram.New(1, 3_600_000_000, 3),
			pr: workload.Progress{Phase: phase, Phases: a.phases, Strategy: line.Strategy, Label: line.Label, Total: line.Total}}
		a.buckets[[2]int{phase, k}] = b
	}
	b.n++
	b.pr.Elapsed = max(b.pr.Elapsed, line.Elapsed)
	s := &b.pr.Second
	s.Duration = max(s.Duration, line.Second.Duration)
	s.Acquired += line.Second.Acquired
	s.Timeouts += line.Second.Timeouts
	s.Errors += line.Second.Errors
	s.Overlaps += line.Second.Overlaps
	s.Renewals += line.Second.Renewals
	b.pr.AcquireRate += line.AcquireRate
	b.pr.Overlaps += line.Overlaps
	if h := decodeHist(line.Second.Latency); h != nil {
		b.hist.Merge(h)
	}
	if b.n == a.seg.Procs {
		a.emitLocked([2]int{phase, k}, b)
	}
}

func (a *progress) emitLocked(key [2]int, b *second) {
	delete(a.buckets, key)
	w := a.window[key[0]]
	if w == nil {
		w = hdrhistogram.New(1, 3_600_000_000, 3)
		a.window[key[0]] = w
	}
	w.Merge(b.hist)
	b.pr.P99US = w.ValueAtQuantile(99)
	if b.hist.TotalCount() > 0 {
		b.pr.Second.P50US, b.pr.Second.P99US = b.hist.ValueAtQuantile(50), b.hist.ValueAtQuantile(99)
	}
	b.pr.Second.Latency = b.hist
	a.emit(b.pr)
}

// flush emits the seconds that not every child reported (one that ended first).
func (a *progress) flush() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for key, b := range a.buckets {
		a.emitLocked(key, b)
	}
}

// childProgress is one line of a child's progress stream (--procs-child on stdout).
type childProgress struct {
	Phase       int           `json:"phase"`
	Strategy    string        `json:"strategy"`
	Label       string        `json:"label,omitempty"`
	Warmup      bool          `json:"warmup,omitempty"`
	Elapsed     time.Duration `json:"elapsed"`
	Total       time.Duration `json:"total"`
	AcquireRate float64       `json:"rate"`
	Overlaps    uint64        `json:"overlaps"`
	Second      struct {
		Duration                                       time.Duration `json:"duration"`
		Acquired, Timeouts, Errors, Overlaps, Renewals uint64
		Latency                                        string `json:"latency,omitempty"` // HDR V2, compressed, base64
	} `json:"second"`
}

// ProgressWriter is a child's observer of its progress: one JSON line per report on w.
func ProgressWriter(w io.Writer) func(workload.Progress) {
	var mu sync.Mutex
	enc := json.NewEncoder(w)
	return func(pr workload.Progress) {
		line := childProgress{Phase: pr.Phase, Strategy: pr.Strategy, Label: pr.Label, Warmup: pr.Warmup,
			Elapsed: pr.Elapsed, Total: pr.Total, AcquireRate: pr.AcquireRate, Overlaps: pr.Overlaps}
		s := &line.Second
		s.Duration, s.Acquired, s.Timeouts, s.Errors, s.Overlaps, s.Renewals = pr.Second.Duration,
			pr.Second.Acquired, pr.Second.Timeouts, pr.Second.Errors, pr.Second.Overlaps, pr.Second.Renewals
		// report's encoder: the library's makes a zlib writer of 830 KB per call, once a
		// second in every child, whose one core (GOMAXPROCS) its workers wait behind.
		s.Latency, _ = report.EncodeHistogram(pr.Second.Latency)
		mu.Lock()
		defer mu.Unlock()
		_ = enc.Encode(line) // a parent that went away ends this process anyway
	}
}

func decodeHist(s string) *hdrhistogram.Histogram {
	if s == "" {
		return nil
	}
	h, err := hdrhistogram.Decode([]byte(s))
	if err != nil {
		return nil
	}
	return h
}
