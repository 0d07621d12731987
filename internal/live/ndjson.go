package live

import (
	"encoding/json"
	"io"
	"sync"
	"time"

	"github.com/lockbench/lockbench/workload"
)

// Line is one second of one phase's measured window in the --live stream. Summed over a
// phase's lines, acquires, timeouts, errors, overlaps and renewals are the phase's totals
// in the report (its last line covers the window's last, possibly shorter, interval).
type Line struct {
	// TS is the end of the interval in seconds from the window's start, as the report's
	// timeline counts (t_s).
	TS float64 `json:"t_s"`
	// Time is the wall clock at the end of the interval (RFC 3339, UTC, ms), to line the
	// stream up with other clocks (Grafana, server logs).
	Time     string `json:"time"`
	Strategy string `json:"strategy"`
	// Phase is the phase's 1-based number in the run; Label its label when it has one
	// (a sweep's "ttl=1s", a capacity step's "ramp 2k/s").
	Phase int    `json:"phase"`
	Label string `json:"label,omitempty"`
	// IntervalS is the interval's length in seconds (about 1).
	IntervalS       float64 `json:"interval_s"`
	Acquires        uint64  `json:"acquires"`
	AcquireRatePerS float64 `json:"acquire_rate_per_s"`
	// P50US and P99US are the interval's acquire latency percentiles, µs (0 when nothing
	// was acquired in it).
	P50US    int64  `json:"p50_us"`
	P99US    int64  `json:"p99_us"`
	Timeouts uint64 `json:"timeouts"`
	Errors   uint64 `json:"errors"`
	Overlaps uint64 `json:"overlaps"`
	Renewals uint64 `json:"renewals"`
}

// Lines writes the --live stream: one JSON object per line, each written with a single
// Write as its second ends. Nothing is buffered in the process, so a crash loses at most
// the second under way (the operating system still holds what was written; it is not
// fsynced). Warm-up reports are not written: they measure nothing.
type Lines struct {
	mu  sync.Mutex
	w   io.Writer
	buf []byte
	err error
}

// NewLines writes the stream to w.
func NewLines(w io.Writer) *Lines { return &Lines{w: w} }

// Observe writes the line of one progress report. After a write error it writes no more;
// Err returns the error.
func (l *Lines) Observe(pr workload.Progress) {
	if pr.Warmup {
		return
	}
	sec := pr.Second
	line := Line{
		TS:       pr.Elapsed.Seconds(),
		Time:     time.Now().UTC().Format("2006-01-02T15:04:05.000Z07:00"),
		Strategy: pr.Strategy, Phase: pr.Phase, Label: pr.Label,
		IntervalS: sec.Duration.Seconds(),
		Acquires:  sec.Acquired,
		P50US:     sec.P50US, P99US: sec.P99US,
		Timeouts: sec.Timeouts, Errors: sec.Errors, Overlaps: sec.Overlaps, Renewals: sec.Renewals,
	}
	if sec.Duration > 0 {
		line.AcquireRatePerS = float64(sec.Acquired) / sec.Duration.Seconds()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return
	}
	b, err := json.Marshal(line)
	if err != nil {
		l.err = err
		return
	}
	l.buf = append(append(l.buf[:0], b...), '\n')
	_, l.err = l.w.Write(l.buf)
}

// Err is the first write error, nil when every line was written.
func (l *Lines) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}
