package workload

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestScheduleDueAndIndex(t *testing.T) {
	start := time.Unix(1000, 0)
	s := newSchedule(start, 3, start, start.Add(time.Second)) // 3 a second: 0, 333.3ms, 666.7ms
	if got := s.due(1).Sub(start); got != 333333333*time.Nanosecond {
		t.Errorf("due(1) at 3/s = %s", got)
	}
	for _, tc := range []struct {
		d    time.Duration
		want uint64
	}{
		{-time.Second, 0}, {0, 0}, {time.Nanosecond, 1},
		{333333333 * time.Nanosecond, 1}, {333333334 * time.Nanosecond, 2},
		{time.Second, 3}, {time.Second + 1, 4},
	} {
		if got := s.index(tc.d); got != tc.want {
			t.Errorf("index(%s) = %d, want %d", tc.d, got, tc.want)
		}
	}
	if s.first != 0 || s.end != 3 {
		t.Errorf("a 1s window at 3/s from the start spans arrivals [%d, %d), want [0, 3)", s.first, s.end)
	}
}

func TestScheduleClaims(t *testing.T) {
	start := time.Unix(1000, 0)
	at := func(ms int) time.Time { return start.Add(time.Duration(ms) * time.Millisecond) }
	// 100 a second, 1s of warm-up, a 1s window: arrivals 100..199 are measured.
	s := newSchedule(start, 100, at(1000), at(2000))
	// claim is a worker, free since free, claiming at now.
	claim := func(free, now time.Time, want uint64) {
		t.Helper()
		if i, ok := s.claim(free, now); !ok || i != want {
			t.Fatalf("claim at %s by a worker free since %s = %d, %v; want %d", now.Sub(start), free.Sub(start), i, ok, want)
		}
	}
	// Three workers free at the start claim the first three arrivals, on time or ahead:
	// arrival 0 too, due at the very start, although their first claim comes after it.
	claim(at(0), at(0).Add(time.Microsecond), 0)
	claim(at(0), at(0), 1)
	claim(at(0), at(0), 2)
	// One free at 35ms: 3 was due at 30ms with nobody free, so it is passed over for 4.
	claim(at(35), at(35), 4)
	// One free since 45ms, claiming late at 52ms: 5 came due while it was free (at 50ms),
	// and it takes it, late.
	claim(at(45), at(52), 5)
	// During the warm-up passing arrivals over is not counted.
	claim(at(995), at(995), 100)
	if d := s.droppedSoFar(); d != 0 {
		t.Fatalf("%d dropped during the warm-up", d)
	}
	// In the window it is: 101..149 came due while no worker was free.
	claim(at(1495), at(1495), 150)
	if d := s.droppedSoFar(); d != 49 {
		t.Fatalf("dropped %d, want 49 (101..149)", d)
	}
	// A worker free before the next unclaimed one is due takes it.
	claim(at(1400), at(1400), 151)
	// At the window's end the unclaimed rest of it is dropped, and claims fail.
	s.close()
	if d := s.droppedSoFar(); d != 49+48 {
		t.Fatalf("dropped %d after close, want %d (152..199 too)", d, 49+48)
	}
	if i, ok := s.claim(at(1500), at(1500)); ok {
		t.Fatalf("claimed %d after the schedule closed", i)
	}
	var closed *schedule
	if closed.droppedSoFar() != 0 {
		t.Fatal("a closed loop reports drops")
	}
}

func TestScheduleClaimsEachArrivalOnce(t *testing.T) {
	start := time.Unix(1000, 0)
	s := newSchedule(start, 1e6, start, start.Add(5*time.Millisecond)) // 5000 arrivals, 1µs apart
	seen := make([]atomic.Bool, s.end)
	var claims atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for {
				// The clock runs 1.5µs per claim made: claimers fall behind, some are passed over.
				now := start.Add(time.Duration(claims.Add(1)) * 1500 * time.Nanosecond)
				i, ok := s.claim(now, now)
				if !ok {
					return
				}
				if seen[i].Swap(true) {
					t.Errorf("arrival %d claimed twice", i)
				}
			}
		})
	}
	wg.Wait()
	claimed := uint64(0)
	for i := range seen {
		if seen[i].Load() {
			claimed++
		}
	}
	if claimed == 0 || s.droppedSoFar() == 0 {
		t.Fatalf("claimed %d, dropped %d: want some of each", claimed, s.droppedSoFar())
	}
	if claimed+s.droppedSoFar() != s.end {
		t.Fatalf("claimed %d + dropped %d arrivals, want all %d exactly once", claimed, s.droppedSoFar(), s.end)
	}
}
