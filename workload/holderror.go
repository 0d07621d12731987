package workload

import (
	"sync"
	"sync/atomic"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lockbench/lockbench/report"
)

// holdErrors counts how much later than asked the measured holds ended (the hold timer's
// error: a hold never ends early), in whole microseconds: below a millisecond in a counter
// each, lock-free, the rare later ones in a histogram under a lock.
type holdErrors struct {
	us   [holdErrorSlots]atomic.Uint64
	mu   sync.Mutex
	over *hdrhistogram.Histogram // made on first use
}

const holdErrorSlots = 1024

func (e *holdErrors) add(late time.Duration) {
	us := late.Microseconds()
	if us < holdErrorSlots {
		e.us[max(us, 0)].Add(1)
		return
	}
	e.mu.Lock()
	if e.over == nil {
		e.over = report.NewHistogram()
	}
	record(e.over, us)
	e.mu.Unlock()
}

// percentiles are the errors' percentiles, in µs; nil without a measured hold.
func (e *holdErrors) percentiles() *report.Percentiles {
	h := e.histogram()
	if h.TotalCount() == 0 {
		return nil
	}
	p := report.PercentilesOf(h)
	return &p
}

// encoded is the errors' histogram in the result's encoding (Histograms.HoldError), for
// report merge to merge exactly; "" without a measured hold.
func (e *holdErrors) encoded() string {
	s, _ := report.EncodeHistogram(e.histogram())
	return s
}

// histogram is every error so far in one histogram, in µs.
func (e *holdErrors) histogram() *hdrhistogram.Histogram {
	h := report.NewHistogram()
	for us := range e.us {
		if n := e.us[us].Load(); n > 0 {
			_ = h.RecordValues(int64(us), int64(n))
		}
	}
	e.mu.Lock()
	if e.over != nil {
		h.Merge(e.over)
	}
	e.mu.Unlock()
	return h
}
