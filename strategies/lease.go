package strategies

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"
)

// leaseOps is the Redis side of a lease, supplied by each strategy.
type leaseOps interface {
	// release gives the lock up; an error wrapping ErrNotOwner when it was no longer ours.
	release(ctx context.Context, l *lease) error
	// renew extends the lease; false (with a nil error) when Redis shows it is no longer ours.
	renew(ctx context.Context, l *lease) (bool, error)
}

// lease is the Lease of every strategy but the reentrant-local nesting and redlock.
type lease struct {
	ops   leaseOps
	b     *base
	name  string // the lock's name as the caller gave it: its release channel, hooks, errors
	key   string // the key Redis stores the lock under (name, or name hash-tagged)
	owner string
	token string // what the lock holds for us (the hash field for reentrant-hash)
	fence uint64

	released atomic.Bool
	dog      *watchdog // nil when renewal is off

	// validFrom is the earliest moment the lease's current ttl can have begun in Redis
	// (since epoch, ns): the start of the attempt that took it, then of each renewal that
	// got through. 0 when unknown (a lock handed over by a local release).
	validFrom atomic.Int64
}

// noExpiry is the ValidUntil of a lease without a ttl (NoTTL).
var noExpiry = time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)

// epoch is the origin of lease.validFrom: a monotonic clock reading, immune to wall-clock steps.
var epoch = time.Now()

// ValidUntil is the earliest the lease can expire in Redis, by this process's clock: the
// ttl counted from the start of the attempt that took it or of the last renewal that got
// through. A holder that acts past it may no longer hold the lock. Zero when unknown.
func (l *lease) ValidUntil() time.Time {
	if l.b.o.TTL.None() {
		return noExpiry
	}
	from := l.validFrom.Load()
	if from == 0 {
		return time.Time{}
	}
	return epoch.Add(time.Duration(from) + l.b.o.ttl)
}

// stampValid records that the lease's ttl began no earlier than t.
func (l *lease) stampValid(t time.Time) { l.validFrom.Store(int64(max(t.Sub(epoch), 1))) }

func (b *base) newLease(ops leaseOps, name, key, owner, token string, fence uint64) *lease {
	l := &lease{ops: ops, b: b, name: name, key: key, owner: owner, token: token, fence: fence}
	if b.holds != nil {
		b.holds.add(name, owner, 1) // until Release
	}
	if b.o.renewal > 0 {
		l.dog = startWatchdog(b, l)
	}
	return l
}

// Release stops the watchdog, then runs the ReleasePause hook, then the strategy's release.
// The hook comes after the watchdog stopped, as in a client that paused once it had decided
// to let go: nothing extends the lease during the pause, so it can lapse and pass to someone
// else before the release's first command, which then shows whether the release checks
// ownership (token: ErrNotOwner) or not (set-nx-del: it deletes the new holder's lock).
func (l *lease) Release(ctx context.Context) error {
	if !l.released.CompareAndSwap(false, true) {
		return l.releaseErr(nil)
	}
	if l.b.holds != nil {
		l.b.holds.add(l.name, l.owner, -1)
	}
	if l.dog != nil {
		l.dog.stop()
	}
	if pause := l.b.releasePause; pause != nil {
		pause(ctx, l.name, l.owner)
	}
	if err := l.ops.release(ctx, l); err != nil {
		return l.releaseErr(err)
	}
	return nil
}

// releaseErr is Release's error: err wrapped, or ErrReleased when err is nil. Made in a
// frame of its own, as fmt's arguments in Release's would lie under the release's wait for
// its reply (see base.turnCall).
//
//go:noinline
func (l *lease) releaseErr(err error) error {
	if err == nil {
		return fmt.Errorf("%w: key %s", ErrReleased, l.name)
	}
	return fmt.Errorf("%s: release key %s: %w", l.b.info.Name, l.name, err)
}

func (l *lease) Fence() uint64 { return l.fence }

func (l *lease) Lost() <-chan struct{} {
	if l.dog == nil {
		return nil
	}
	return l.dog.lost
}

// watchdog renews one lease every interval until the lease is released (Redisson's
// watchdog, seed 002). A renewal that finds the lease gone, or renewals failing for a whole
// ttl since the last one that got through, mark the lease lost.
type watchdog struct {
	cancel context.CancelFunc
	done   chan struct{} // closed when the renewal goroutine has exited
	lost   chan struct{} // closed when the lease is lost
}

func startWatchdog(b *base, l *lease) *watchdog {
	ctx, cancel := context.WithCancel(context.Background())
	d := &watchdog{cancel: cancel, done: make(chan struct{}), lost: make(chan struct{})}
	go d.run(ctx, b, l)
	return d
}

// stop ends renewal and waits for a renewal in flight, so that it cannot be mistaken for a
// loss after the release deletes the lock.
func (d *watchdog) stop() {
	d.cancel()
	<-d.done
}

func (d *watchdog) run(ctx context.Context, b *base, l *lease) {
	defer close(d.done)
	interval, ttl := b.o.renewal, b.o.ttl
	validFrom := time.Now() // the lease runs at least until validFrom + ttl
	t := time.NewTimer(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if hook := b.o.Hooks.BeforeRenew; hook != nil {
			hook(ctx, l.name, l.owner)
		}
		sent := time.Now()
		rctx, cancel := context.WithTimeout(ctx, interval)
		ok, err := l.ops.renew(rctx, l)
		cancel()
		if ctx.Err() != nil {
			return // released meanwhile: this renewal's outcome no longer matters
		}
		switch {
		case err == nil && ok:
			b.renewals.Add(1)
			validFrom = sent
			l.stampValid(sent)
		case err == nil || time.Since(validFrom) >= ttl:
			b.renewFailures.Add(1)
			close(d.lost)
			return
		}
		t.Reset(interval)
	}
}
