// Package stalls notices when the whole process stopped running for a while: a goroutine
// that wakes every few milliseconds records each gap between its wake-ups longer than a
// threshold. A test that times a fault (a watchdog that must renew, a kill that must land on
// time) fails for the wrong reason when its whole process is stopped — a busy host's stolen
// CPU, a SIGSTOP — and the stalls say so next to the failure.
package stalls

import (
	"fmt"
	"strings"
	"sync"
	"time"
)

// Stall is a gap in the process's running: nothing woke between At and At+Gap.
type Stall struct {
	At  time.Time
	Gap time.Duration
}

// Watch records the stalls from Start until Stop.
type Watch struct {
	every, min time.Duration

	mu     sync.Mutex
	stalls []Stall

	stop chan struct{}
	done chan struct{}
}

// Start watches the process: a wake-up every every, and a stall recorded whenever two
// wake-ups are min or more apart (min well above every: a busy machine's scheduling).
func Start(every, min time.Duration) *Watch {
	w := &Watch{every: every, min: min, stop: make(chan struct{}), done: make(chan struct{})}
	go w.run()
	return w
}

func (w *Watch) run() {
	defer close(w.done)
	t := time.NewTicker(w.every)
	defer t.Stop()
	last := time.Now()
	for {
		select {
		case <-w.stop:
			return
		case <-t.C:
		}
		now := time.Now()
		if gap := now.Sub(last); gap >= w.min {
			w.mu.Lock()
			w.stalls = append(w.stalls, Stall{At: last, Gap: gap})
			w.mu.Unlock()
		}
		last = now
	}
}

// Stalls are the stalls recorded so far.
func (w *Watch) Stalls() []Stall {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]Stall(nil), w.stalls...)
}

// Between are the stalls of min or more that overlapped [from, to].
func (w *Watch) Between(from, to time.Time, min time.Duration) []Stall {
	var in []Stall
	for _, s := range w.Stalls() {
		if s.Gap >= min && s.At.Before(to) && s.At.Add(s.Gap).After(from) {
			in = append(in, s)
		}
	}
	return in
}

// Stop ends the watch and returns its stalls.
func (w *Watch) Stop() []Stall {
	close(w.stop)
	<-w.done
	return w.Stalls()
}

// Format is stalls as one line for a test's log: "none", or each stall's clock time and
// length.
func Format(stalls []Stall) string {
	if len(stalls) == 0 {
		return "none"
	}
	parts := make([]string, len(stalls))
	for i, s := range stalls {
		parts[i] = fmt.Sprintf("%s for %s", s.At.UTC().Format("15:04:05.000"), s.Gap.Round(time.Millisecond))
	}
	return strings.Join(parts, ", ")
}
