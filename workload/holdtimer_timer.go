package workload

import "time"

// timerSleeper sleeps on a Go timer: within a millisecond of its time on Linux (epoll's
// timeout), which the window's lateness then covers.
type timerSleeper struct{ t *time.Timer }

func newTimerSleeper() *timerSleeper {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &timerSleeper{t: t}
}

func (s *timerSleeper) arm(d time.Duration) { s.t.Reset(max(d, 1)) }
func (s *timerSleeper) wait()               { <-s.t.C }
