package workload

import (
	"context"
	"sync"
	"time"
)

// acquireCtx is a worker's acquire context, reused from one acquire to the next: the
// worker's context plus the acquire timeout.
//
// context.WithTimeout per acquire costs an allocation, a timer, and a registration with the
// parent under the parent's lock — one lock shared by every worker of the phase. In the
// spread benchmark (1000 workers, hold 0) that was 12 % of lockbench's CPU. This context
// registers with its parent once per worker and re-arms one timer per acquire.
//
// It serves one acquire at a time, from its worker's goroutine; the timer and the parent's
// cancellation are the only other goroutines that touch it.
type acquireCtx struct {
	parent     context.Context
	timer      *time.Timer
	stopParent func() bool

	mu       sync.Mutex
	deadline time.Time
	done     chan struct{}
	err      error
}

func newAcquireCtx(parent context.Context) *acquireCtx {
	c := &acquireCtx{parent: parent, done: make(chan struct{})}
	c.timer = time.AfterFunc(time.Hour, c.expire)
	c.timer.Stop()
	c.stopParent = context.AfterFunc(parent, func() { c.end(parent.Err()) })
	return c
}

// start arms c for one acquire that may take until now+d.
func (c *acquireCtx) start(now time.Time, d time.Duration) context.Context {
	c.mu.Lock()
	if c.err != nil {
		if perr := c.parent.Err(); perr != nil {
			c.err = perr // over for good
		} else {
			c.done, c.err = make(chan struct{}), nil // the last acquire timed out
		}
	}
	c.deadline = now.Add(d)
	c.mu.Unlock()
	c.timer.Reset(d)
	return c
}

// stop disarms c once the acquire returned. A timer that fires anyway finds its deadline
// not reached for the next acquire, or closes a channel nobody waits on any more.
func (c *acquireCtx) stop() { c.timer.Stop() }

// close releases c's registration with its parent; c is unusable afterwards.
func (c *acquireCtx) close() {
	c.timer.Stop()
	c.stopParent()
}

// expire is the timer's: the acquire's time is up, unless a later start moved the deadline.
func (c *acquireCtx) expire() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if time.Now().Before(c.deadline) {
		return // a stale firing, armed for an acquire that is over
	}
	c.endLocked(context.DeadlineExceeded)
}

func (c *acquireCtx) end(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.endLocked(err)
}

func (c *acquireCtx) endLocked(err error) {
	if c.err == nil {
		c.err = err
		close(c.done)
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

func (c *acquireCtx) Done() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.done
}

func (c *acquireCtx) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

func (c *acquireCtx) Value(key any) any { return c.parent.Value(key) }
