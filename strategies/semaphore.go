package strategies

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/rueidis"
)

// Sources: RedissonSemaphore.java and RedissonPermitExpirableSemaphore.java at redisson-4.7.0
// (redissonSource), whose acquire and release scripts are the 2024 ones these were written from
// (tryAcquireAsync0 lines 265-275; tryAcquireAsync lines 370-410, tryReleaseAsync lines 612-632).
const (
	semaphoreSource  = "RedissonSemaphore.java, " + redissonSource
	xsemaphoreSource = "RedissonPermitExpirableSemaphore.java, " + redissonSource
)

// semaphore is Redisson's RSemaphore. Its permits are a count under the hash-tagged name,
// set once per key by trySetPermits (semaphore_set.lua) the first time this process uses
// the key, taken by a DECRBY when enough are free (semaphore_acquire.lua) and given back by
// an INCRBY that announces the count on redisson_sc:{name} (semaphore_release.lua), whoever
// gives it. Nothing records who holds a permit and the count has no ttl, as in Redisson: a
// holder that dies never gives its permit back, and the key outlives every holder. (Redisson's
// newer trySetPermits takes a timeToLive, which would reset the whole semaphore when it
// lapsed, dead holders' permits and live holders' alike; lockbench sets none.)
//
// A waiter has no lease to sleep out: without a message it sleeps the ttl (pubsub).
type semaphore struct {
	*base
	c          rueidis.Client
	permitsArg string
	set        sync.Map        // keys whose permits this process has set
	ps         *redissonPubSub // Redisson's own wait (--wait native), else nil
}

func newSemaphore(info Info, o *resolved) (Strategy, error) {
	b, err := newBaseWaiting(info, o, o.Client, redissonNative)
	if err != nil {
		return nil, err
	}
	ps := redissonNativeWait(b, o.Client, semaphoreMessages, func(key string) string { return semaphoreChannel(hashTagged(key)) }, sleepLeft)
	return &semaphore{base: b, c: o.Client, permitsArg: strconv.Itoa(o.Permits), ps: ps}, nil
}

// Close ends the subscriptions.
func (s *semaphore) Close() error {
	closePubSub(s.ps)
	return s.base.Close()
}

// Stats adds Redisson's own subscriptions to the common counters.
func (s *semaphore) Stats() Stats { return withPubSub(s.base.Stats(), s.ps) }

// semaphoreChannel is Redisson's channel of the semaphore stored under key (hash-tagged).
func semaphoreChannel(key string) string { return "redisson_sc:" + key }

// setPermits runs trySetPermits for key once per process, as an application that creates
// its semaphore at start-up does; a key another process set first keeps its count.
func (s *semaphore) setPermits(ctx context.Context, key string) error {
	if err := checkKey(key); err != nil {
		return err
	}
	if _, ok := s.set.Load(key); ok {
		return nil
	}
	k := hashTagged(key)
	if err := semaphoreSetScript.Exec(ctx, s.c, []string{k, semaphoreChannel(k)}, []string{s.permitsArg}).Error(); err != nil {
		return s.attemptErr(ctx, key, err)
	}
	s.set.Store(key, struct{}{})
	return nil
}

func (s *semaphore) Acquire(ctx context.Context, key, owner string) (Lease, error) {
	if err := s.setPermits(ctx, key); err != nil {
		return nil, err
	}
	k := hashTagged(key)
	return s.acquire(ctx, key, owner, func(ctx context.Context) (Lease, time.Duration, error) {
		n, err := semaphoreAcquireScript.ExecInt64(ctx, s.c, []string{k}, []string{"1"})
		if err != nil || n == 0 {
			return nil, 0, err
		}
		return s.newLease(s, key, k, owner, "", 0), 0, nil
	})
}

func (s *semaphore) release(ctx context.Context, l *lease) error {
	keys, args := s.announce([]string{l.key}, []string{"1"}, l.name, semaphoreChannel(l.key))
	r, err := semaphoreReleaseScript.ExecInt64(ctx, s.c, keys, args)
	if err != nil {
		return err
	}
	return s.announced(l.name, r)
}

var errNoRenewal = errors.New("this lease cannot be renewed")

// renew is never called: the strategy does not claim AutoRenew, so no watchdog runs.
func (s *semaphore) renew(context.Context, *lease) (bool, error) { return false, errNoRenewal }

// Available is RSemaphore.availablePermits: the count, or Permits for a key never set.
func (s *semaphore) Available(ctx context.Context, key string) (int, error) {
	n, err := s.c.Do(ctx, s.c.B().Get().Key(hashTagged(key)).Build()).AsInt64()
	if rueidis.IsRedisNil(err) {
		return s.o.Permits, nil
	}
	return int(n), err
}

// xsemaphoreNoLease is RPermitExpirableSemaphore's nonExpirableTimeout: the score of a
// permit taken without a lease, which lockbench never takes.
const xsemaphoreNoLease = "922337203685477"

// expirableSemaphore is Redisson's RPermitExpirableSemaphore: RSemaphore's count plus a
// sorted set of the ids of the permits taken ({name}:timeout), each scored by the epoch ms
// its lease (the ttl) ends. An acquire first reclaims permits whose lease ran out, so a
// dead holder's permit returns once its lease is over; a release gives back only an id
// still in the set. Lease ends are read from the clients' clocks. Like RSemaphore's, the
// count has no ttl, nor has the set (Redisson gives it the count's ttl when the count has
// one): both outlive the holders, and the set holds only the permits held or left behind.
//
// A waiter sleeps at most until the first lease ends, as Redisson's does.
type expirableSemaphore struct{ *semaphore }

func newExpirableSemaphore(info Info, o *resolved) (Strategy, error) {
	s, err := newSemaphore(info, o)
	if err != nil {
		return nil, err
	}
	return &expirableSemaphore{s.(*semaphore)}, nil
}

// xsemaphoreKeys are the permit count, the leases and the channel, in one hash slot.
func xsemaphoreKeys(k string) []string { return []string{k, k + ":timeout", semaphoreChannel(k)} }

func (s *expirableSemaphore) Acquire(ctx context.Context, key, owner string) (Lease, error) {
	if err := s.setPermits(ctx, key); err != nil {
		return nil, err
	}
	keys := xsemaphoreKeys(hashTagged(key))
	id := newToken(owner)
	return s.acquire(ctx, key, owner, func(ctx context.Context) (Lease, time.Duration, error) {
		now := s.o.now(ctx).UnixMilli()
		r, err := xsemaphoreAcquireScript.ExecString(ctx, s.c, keys, s.acquireArgs(id, now))
		return s.acquired(key, keys[0], owner, id, now, r, err)
	})
}

// acquireArgs are xsemaphore_acquire.lua's arguments for a permit id taken at now. They and
// acquired's work stay out of the attempt's frame, which lies under the script's wait for
// its reply (see base.turnCall): with them there, nearly every worker of a pubsub fleet
// grew its stack from 4 to 8 KiB.
//
//go:noinline
func (s *expirableSemaphore) acquireArgs(id string, now int64) []string {
	return []string{"1", strconv.FormatInt(now+s.o.ttlMS, 10), strconv.FormatInt(now, 10), xsemaphoreNoLease, id}
}

// acquired is the attempt's outcome from the script's reply r: the permit's lease, or how
// long until the first lease held ends.
//
//go:noinline
func (s *expirableSemaphore) acquired(key, countKey, owner, id string, now int64, r string, err error) (Lease, time.Duration, error) {
	switch {
	case rueidis.IsRedisNil(err):
		return nil, 0, nil
	case err != nil:
		return nil, 0, err
	case r == "OK":
		return s.newLease(s, key, countKey, owner, id, 0), 0, nil
	}
	end, err := strconv.ParseInt(strings.TrimPrefix(r, ":"), 10, 64)
	if err != nil {
		return nil, 0, err
	}
	return nil, time.Duration(max(end-now, 1)) * time.Millisecond, nil
}

func (s *expirableSemaphore) release(ctx context.Context, l *lease) error {
	keys := xsemaphoreKeys(l.key)
	keys, args := s.announce(keys[:2], []string{l.token, strconv.FormatInt(s.o.now(ctx).UnixMilli(), 10)}, l.name, keys[2])
	r, err := xsemaphoreReleaseScript.Exec(ctx, s.c, keys, args).AsIntSlice()
	switch {
	case err != nil:
		return err
	case r[0] == 0:
		return ErrNotOwner // reclaimed after its lease ran out, maybe taken again
	}
	if err := s.announced(l.name, r[1]); err != nil {
		return err
	}
	if r[0] == 2 {
		return ErrNotOwner // its lease had run out; given back, as Redisson does, but it was not ours
	}
	return nil
}

// Available is RPermitExpirableSemaphore.availablePermits: permits whose lease ran out are
// reclaimed first, so they count as free; Permits for a key never set.
func (s *expirableSemaphore) Available(ctx context.Context, key string) (int, error) {
	now := strconv.FormatInt(s.o.now(ctx).UnixMilli(), 10)
	n, err := xsemaphoreAvailableScript.ExecInt64(ctx, s.c, xsemaphoreKeys(hashTagged(key)), []string{now})
	if rueidis.IsRedisNil(err) {
		return s.o.Permits, nil
	}
	return int(n), err
}
