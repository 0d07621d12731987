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
}

func (b *base) newLease(ops leaseOps, name, key, owner, token string, fence uint64) *lease {
	l := &lease{ops: ops, b: b, name: name, key: key, owner: owner, token: token, fence: fence}
	if b.o.renewal > 0 {
		l.dog = startWatchdog(b, l)
	}
	return l
}

func (l *lease) Release(ctx context.Context) error {
	if !l.released.CompareAndSwap(false, true) {
		return fmt.Errorf("%w: key %s", ErrReleased, l.name)
	}
	if l.dog != nil {
		l.dog.stop()
	}
	if err := l.ops.release(ctx, l); err != nil {
		return fmt.Errorf("%s: release key %s: %w", l.b.info.Name, l.name, err)
	}
	return nil
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
	interval, ttl := b.o.renewal, b.o.TTL
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
		case err == nil || time.Since(validFrom) >= ttl:
			b.renewFailures.Add(1)
			close(d.lost)
			return
		}
		t.Reset(interval)
	}
}
