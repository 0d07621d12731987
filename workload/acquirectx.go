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
// registers with its parent once per worker and keeps one timer.
//
// The timer is not stopped when an acquire returns, nor re-armed for each one: it stays set
// for the deadline it was armed with, and when it fires during a later acquire it re-arms for
// what is left of that one's time. Timer operations per acquire, measured at 5 % of
// lockbench's CPU in that benchmark, become one per acquire timeout per worker.
//
// It serves one acquire at a time, from its worker's goroutine; the timer and the parent's
// cancellation are the only other goroutines that touch it.
type acquireCtx struct {
	parent     context.Context
	timer      *time.Timer
	stopParent func() bool

	cur    atomic.Pointer[round] // read without the lock: rueidis asks for Done and Err per command
	active atomic.Bool           // an acquire is running

	mu       sync.Mutex
	deadline time.Time // of the acquire running, or of the last one
	armed    bool      // the timer is set, for fireAt
	fireAt   time.Time
}

// round is the context's life until it ends; a timed-out acquire leaves an ended round
// behind, and the next start begins a fresh one.
type round struct {
	done  chan struct{}
	err   error // set before done is closed, read only after
	ended bool  // under acquireCtx.mu
}

func newAcquireCtx(parent context.Context) *acquireCtx {
	c := &acquireCtx{parent: parent}
	c.cur.Store(&round{done: make(chan struct{})})
	c.timer = time.AfterFunc(time.Hour, c.expire)
	c.timer.Stop()
	c.stopParent = context.AfterFunc(parent, func() { c.end(parent.Err()) })
	return c
}

// start arms c for one acquire that may take until now+d.
func (c *acquireCtx) start(now time.Time, d time.Duration) context.Context {
	c.mu.Lock()
	if c.cur.Load().ended && c.parent.Err() == nil {
		c.cur.Store(&round{done: make(chan struct{})}) // the last acquire timed out
	}
	c.deadline = now.Add(d)
	c.active.Store(true)
	if !c.armed || c.deadline.Before(c.fireAt) {
		c.armed, c.fireAt = true, c.deadline
		c.timer.Reset(d)
	}
	c.mu.Unlock()
	return c
}

// stop ends the acquire: a firing from now on finds nothing running and lets the timer rest.
func (c *acquireCtx) stop() { c.active.Store(false) }

// close releases c's registration with its parent; c is unusable afterwards.
func (c *acquireCtx) close() {
	c.timer.Stop()
	c.stopParent()
}

// expire is the timer's: the running acquire's time is up, or, when the timer was armed for
// an earlier acquire, it is re-armed for the rest of the running one's time.
func (c *acquireCtx) expire() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.armed = false
	if !c.active.Load() {
		return
	}
	if left := time.Until(c.deadline); left > 0 {
		c.armed, c.fireAt = true, c.deadline
		c.timer.Reset(left)
		return
	}
	c.endLocked(context.DeadlineExceeded)
}

func (c *acquireCtx) end(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if r := c.cur.Load(); r.ended && r.err != err {
		// Ended by a timeout before the parent ended: from now on it reports the parent's end.
		c.cur.Store(&round{done: r.done, err: err, ended: true})
		return
	}
	c.endLocked(err)
}

func (c *acquireCtx) endLocked(err error) {
	if r := c.cur.Load(); !r.ended {
		r.err, r.ended = err, true
		close(r.done)
	}
}

func (c *acquireCtx) Deadline() (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if d, ok := c.parent.Deadline(); ok && d.Before(c.deadline) {
		return d, true
	}
	return c.deadline, true
}

func (c *acquireCtx) Done() <-chan struct{} { return c.cur.Load().done }

func (c *acquireCtx) Err() error {
	r := c.cur.Load()
	select {
	case <-r.done:
		return r.err
	default:
		return nil
	}
}

func (c *acquireCtx) Value(key any) any { return c.parent.Value(key) }
