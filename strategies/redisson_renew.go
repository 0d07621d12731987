package strategies

import (
	"context"
	"sync"
	"time"
)

// Redisson's watchdog (redisson-4.7.0, renewal/RenewalTask.java and LockTask.java,
// renewal/LockEntry.java): a lock taken without a leaseTime is renewed while this client
// holds it, once per lock however many times the owner re-entered it (LockEntry counts the
// owner's holds; the lock leaves the renewal when the count is back to 0, RenewalTask.
// cancelExpirationRenewal), every lockWatchdogTimeout/3. A renewal that finds the lock no
// longer the owner's stops renewing it (LockTask's ContainsDecoder, then
// cancelExpirationRenewal); a renewal that fails (an error, a timeout) is logged and the next
// one is scheduled as usual (RenewalTask.run lines 153-166): the watchdog never gives up on
// errors. Redisson renews all of a client's locks in one script per 100 (lockWatchdogBatchSize);
// lockbench renews each lock by itself.

// redissonRenewals are the watchdogs of one Redisson strategy instance, one per lock and
// owner (RenewalTask.name2entry and LockEntry).
type redissonRenewals struct {
	mu sync.Mutex
	m  map[string]*redissonRenewal
}

type redissonRenewal struct {
	holds int
	dog   *watchdog
}

// newLease is base.newLease for the Redisson family: a lease that joins its lock's renewal,
// started by the owner's first hold, rather than starting one of its own.
func (r *redissonRenewals) newLease(b *base, ops leaseOps, name, key, owner, token string) *lease {
	l := &lease{ops: ops, b: b, name: name, key: key, owner: owner, token: token}
	if b.holds != nil {
		b.holds.add(name, owner, 1) // until Release, as base.newLease counts
	}
	if b.o.renewal > 0 {
		l.dog = r.join(b, l)
	}
	return l
}

// join counts one more hold of l's lock by l's owner, starting the lock's renewal on the
// first, and returns the hold's handle on it: its stop leaves, and the last to leave stops
// the renewal (waiting for one in flight, as watchdog.stop does).
func (r *redissonRenewals) join(b *base, l *lease) *watchdog {
	id := l.key + "\x00" + l.token
	r.mu.Lock()
	if r.m == nil {
		r.m = map[string]*redissonRenewal{}
	}
	e := r.m[id]
	if e == nil {
		ctx, cancel := context.WithCancel(context.Background())
		e = &redissonRenewal{dog: &watchdog{cancel: cancel, done: make(chan struct{}), lost: make(chan struct{})}}
		r.m[id] = e
		gone := func() { // cancelExpirationRenewal: the next hold starts a renewal afresh
			r.mu.Lock()
			if r.m[id] == e {
				delete(r.m, id)
			}
			r.mu.Unlock()
		}
		go runRedissonWatchdog(ctx, e.dog, b, l, gone)
	}
	e.holds++
	r.mu.Unlock()

	done := make(chan struct{})
	close(done) // stop waits in cancel, for the last hold
	var once sync.Once
	return &watchdog{done: done, lost: e.dog.lost, cancel: func() {
		once.Do(func() {
			r.mu.Lock()
			e.holds--
			last := e.holds == 0
			if last && r.m[id] == e {
				delete(r.m, id)
			}
			r.mu.Unlock()
			if last {
				e.dog.stop()
			}
		})
	}}
}

// runRedissonWatchdog renews l every renewal interval until stopped: Redisson's LockTask for
// one lock. A renewal that finds the lock gone marks it lost, leaves the renewals (gone) and
// ends; an error is counted
// (Stats.RenewFailures) and the next renewal comes at the usual time.
func runRedissonWatchdog(ctx context.Context, d *watchdog, b *base, l *lease, gone func()) {
	defer close(d.done)
	interval := b.o.renewal
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
			return // released meanwhile
		}
		switch {
		case err != nil:
			b.renewFailures.Add(1) // "Can't update locks expiration": logged, renewed next time
		case ok:
			b.renewals.Add(1)
			l.stampValid(sent)
		default:
			b.renewFailures.Add(1)
			close(d.lost)
			gone()
			return
		}
		t.Reset(interval)
	}
}
