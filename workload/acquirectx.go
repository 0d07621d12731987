package workload

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// acquireCtx is a worker's acquire context, reused from one acquire to the next: the
// worker's context plus the acquire timeout.
//
// context.WithTimeout per acquire costs an allocation, a timer, and a registration with the
// parent under the parent's lock — one lock shared by every worker of the phase. In the
// spread benchmark (1000 workers, hold 0) that was 12 % of lockbench's CPU. This context
// registers once per worker and keeps one timer.
//
// The timer is not stopped when an acquire returns, nor re-armed for each one: it stays set
// for the deadline it was armed with, and when it fires during a later acquire it re-arms for
// what is left of that one's time. Timer operations per acquire, measured at 5 % of
// lockbench's CPU in that benchmark, become one per acquire timeout per worker.
//
// Its values come from the worker's context, its end from another one (ends): the phase's
// end stops the worker's loop but lets the acquire in flight finish, so that it is not cut
// between two commands (setnx-expire's SETNX and EXPIRE), the crash only a fault may make.
//
// It serves one acquire at a time, from its worker's goroutine; the timer and ends'
// cancellation are the only other goroutines that touch it.
//
// An acquire's start takes no lock when the timer is already set for no later than its
// deadline (nearly always: the timer was armed for an earlier acquire's deadline, and
// each deadline is later than the last): it stores the deadline, then marks the acquire
// running, then reads the timer's setting, all atomics; expire clears the setting before
// it reads whether an acquire runs and its deadline. Of two such sequences one sees the
// other's write (the atomics are sequentially consistent): either the start sees the timer
// unset and arms it under the lock, or the firing sees the acquire and its deadline and
// re-arms for it. The mutex, a cache line the worker touches after each round trip, was
// 2 % of lockbench's CPU in the spread benchmark.
type acquireCtx struct {
	parent     context.Context // values
	ends       context.Context // cancellation and deadline
	timer      *time.Timer
	stopParent func() bool

	cur    atomic.Pointer[round] // the context handed out; read without the lock
	active atomic.Bool           // an acquire is running

	// deadline of the acquire running, or of the last one, and fireAt, what the timer is
	// set for (0 = not set): ns since ctxEpoch.
	deadline, fireAt atomic.Int64
	// curEnded: cur has ended (a timeout; or ends ended); set under mu.
	curEnded atomic.Bool

	mu sync.Mutex
}

// ctxEpoch is the origin of acquireCtx's deadlines: a monotonic clock reading.
var ctxEpoch = time.Now()

// sinceEpoch is t in ns since ctxEpoch, at least 1 (0 is "not set").
func sinceEpoch(t time.Time) int64 { return max(int64(t.Sub(ctxEpoch)), 1) }

// round is the context.Context an acquire gets: one life from creation to its end. Once
// ended it never reopens — a timed-out acquire leaves it behind, and the next start hands out
// a fresh one — so contexts derived from it (a WithTimeout per redlock node) see a Done and
// an Err that agree, as the context package requires.
type round struct {
	c     *acquireCtx
	done  chan struct{}
	err   atomic.Pointer[error] // set before done is closed; Err reads it without the channel
	ended bool                  // under c.mu
	after map[*func()]struct{}  // AfterFunc callbacks, under c.mu
}

// newAcquireCtx makes the acquire context of a worker running under parent; its acquires end
// when ends does (or time out), whether parent has ended or not.
func newAcquireCtx(parent, ends context.Context) *acquireCtx {
	c := unwatchedAcquireCtx(parent, ends)
	c.stopParent = context.AfterFunc(ends, func() { c.end(ends.Err()) })
	return c
}

// unwatchedAcquireCtx is newAcquireCtx without its registration with ends: the caller
// calls end when ends ends (see endAll). A phase of a million workers registers once for
// them all, where a registration each would be a million entries in one context's child
// map, made and removed under its lock, and a million goroutines when it ends.
func unwatchedAcquireCtx(parent, ends context.Context) *acquireCtx {
	c := &acquireCtx{parent: parent, ends: ends, stopParent: unwatched}
	c.cur.Store(c.newRound())
	c.timer = time.AfterFunc(time.Hour, c.expire)
	c.timer.Stop()
	return c
}

func unwatched() bool { return false }

// endAll ends the acquire contexts in cs (nil entries skipped) when ends ends, with one
// registration; stop undoes it.
func endAll(ends context.Context, cs []*acquireCtx) (stop func() bool) {
	return context.AfterFunc(ends, func() {
		for _, c := range cs {
			if c != nil {
				c.end(ends.Err())
			}
		}
	})
}

func (c *acquireCtx) newRound() *round { return &round{c: c, done: make(chan struct{})} }

// start arms c for one acquire that may take until now+d, and returns its context.
func (c *acquireCtx) start(now time.Time, d time.Duration) context.Context {
	dl := sinceEpoch(now.Add(d))
	if !c.curEnded.Load() {
		c.deadline.Store(dl)
		c.active.Store(true)
		if f := c.fireAt.Load(); f != 0 && f <= dl {
			return c.cur.Load() // the timer fires by this deadline, and re-arms for the rest
		}
	}
	c.mu.Lock()
	r := c.cur.Load()
	if r.ended && c.ends.Err() == nil {
		r = c.newRound() // the last acquire timed out
		c.cur.Store(r)
		c.curEnded.Store(false)
	}
	c.deadline.Store(dl)
	c.active.Store(true)
	if f := c.fireAt.Load(); f == 0 || dl < f {
		c.fireAt.Store(dl)
		c.timer.Reset(d)
	}
	c.mu.Unlock()
	return r
}

// stop ends the acquire: a firing from now on finds nothing running and lets the timer rest.
func (c *acquireCtx) stop() { c.active.Store(false) }

// close releases c's registration with ends; c is unusable afterwards.
func (c *acquireCtx) close() {
	c.timer.Stop()
	c.stopParent()
}

// expire is the timer's: the running acquire's time is up, or, when the timer was armed for
// an earlier acquire, it is re-armed for the rest of the running one's time.
func (c *acquireCtx) expire() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.fireAt.Store(0) // before reading active: see acquireCtx
	if !c.active.Load() {
		return
	}
	dl := c.deadline.Load()
	if left := time.Duration(dl - sinceEpoch(time.Now())); left > 0 {
		c.fireAt.Store(dl)
		c.timer.Reset(left)
		return
	}
	c.endLocked(context.DeadlineExceeded)
}

// end is ends' end: the running round ends with it, and so does every later start
// (a round that had timed out already keeps its own error).
func (c *acquireCtx) end(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cur.Load().ended {
		c.cur.Store(c.newRound())
		c.curEnded.Store(false)
	}
	c.endLocked(err)
}

func (c *acquireCtx) endLocked(err error) {
	r := c.cur.Load()
	if r.ended {
		return
	}
	r.err.Store(&err)
	r.ended = true
	c.curEnded.Store(true)
	close(r.done)
	for f := range r.after {
		go (*f)()
	}
	r.after = nil
}

func (r *round) Deadline() (time.Time, bool) {
	dl := ctxEpoch.Add(time.Duration(r.c.deadline.Load()))
	if d, ok := r.c.ends.Deadline(); ok && d.Before(dl) {
		return d, true
	}
	return dl, true
}

func (r *round) Done() <-chan struct{} { return r.done }

// Err is read by rueidis before every command; an atomic load of the round keeps it off
// the channel (a non-blocking receive there was 2 % of lockbench's CPU in the spread bench).
func (r *round) Err() error {
	if err := r.err.Load(); err != nil {
		return *err
	}
	return nil
}

func (r *round) Value(key any) any { return r.c.parent.Value(key) }

// AfterFunc lets contexts derived from r follow its end without a goroutine each (the
// context package uses it when the parent has it, as context.AfterFunc describes).
func (r *round) AfterFunc(f func()) (stop func() bool) {
	r.c.mu.Lock()
	defer r.c.mu.Unlock()
	if r.ended {
		go f()
		return func() bool { return false }
	}
	if r.after == nil {
		r.after = make(map[*func()]struct{})
	}
	r.after[&f] = struct{}{}
	return func() bool {
		r.c.mu.Lock()
		defer r.c.mu.Unlock()
		_, waiting := r.after[&f]
		delete(r.after, &f)
		return waiting
	}
}
