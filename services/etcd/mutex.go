package etcd

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"

	"github.com/lockbench/lockbench/strategies"
)

// Name is the strategy's name.
const Name = "etcd-mutex"

// MinTTL is the shortest lease etcd grants (its minimum TTL with the default election
// timeout): a shorter --ttl is raised to it.
const MinTTL = 2 * time.Second

func init() {
	strategies.Register(strategies.Info{
		Name:              Name,
		Summary:           "etcd concurrency.Mutex: a key under the lock's prefix per waiter, on the waiter's session lease; the oldest key holds it, the others watch their predecessor",
		SafeUnlock:        true,
		AutoRenew:         true,
		Fencing:           true,
		KeyTTL:            true,
		SafeWithoutFaults: true,
		Source:            "beyond the seeds (go.etcd.io/etcd/client/v3 v3.7.3)",
		Service:           Service,
		Applies:           []string{"ttl", "acquire-timeout"},
		NativeWait:        "watch predecessor: its own; concurrency.Mutex waits on a watch of its predecessor's key being deleted (etcd client/v3 v3.7.3 concurrency/mutex.go Lock, waitDeletes); lockbench never sets its wait",
		Weakness:          "a pause longer than the lease freezes the keep-alive too: the lease lapses and the next waiter enters; the revision fence makes it harmless where the resource checks it",
	}, newMutex)
}

// LeaseSeconds is the session lease etcd-mutex asks for: ttl rounded up to whole seconds
// (etcd's unit), at least MinTTL.
func LeaseSeconds(ttl time.Duration) int64 {
	s := int64((ttl + time.Second - 1) / time.Second)
	return max(s, int64(MinTTL/time.Second))
}

// mutex is etcd-mutex. Each owner (a worker: a client process of its own, as far as the
// lock is concerned) has a session — a lease kept alive every ttl/3 — and locks with
// concurrency.Mutex on it. The keep-alive is lockbench's own loop (keepAliver) instead of the
// client's stream, so that a process-pause fault can freeze it with its holder, through the
// BeforeRenew hook; it sends what the client's loop sends, one keep-alive per ttl/3.
type mutex struct {
	info  strategies.Info
	cli   *clientv3.Client
	lease int64 // seconds
	ka    *keepAliver

	ctx    context.Context // ends at Close: the sessions' keep-alives stop
	cancel context.CancelFunc

	mu       sync.Mutex
	sessions map[string]*concurrency.Session // by owner

	failed atomic.Uint64
}

func newMutex(info strategies.Info, o strategies.Options) (strategies.Strategy, error) {
	conn, ok := o.Service.(*Conn)
	if !ok || conn == nil {
		return nil, &strategies.OptionError{Field: "etcd", Value: fmt.Sprintf("%T", o.Service), Reason: "strategy " + info.Name + " needs an etcd connection (--etcd, or etcd installed to spawn one)"}
	}
	cli, err := conn.newClient(conn.Via)
	if err != nil {
		return nil, err
	}
	m := &mutex{info: info, cli: cli, lease: LeaseSeconds(o.TTL.Duration()), sessions: map[string]*concurrency.Session{}}
	m.ctx, m.cancel = context.WithCancel(context.Background())
	ttl := time.Duration(m.lease) * time.Second
	m.ka = &keepAliver{Lease: cli.Lease, every: ttl / 3, ttl: ttl, hook: o.Hooks.BeforeRenew}
	cli.Lease = m.ka
	return m, nil
}

func (m *mutex) Info() strategies.Info { return m.info }

func (m *mutex) Stats() strategies.Stats {
	return strategies.Stats{Renewals: m.ka.renewals.Load(), RenewFailures: m.ka.failures.Load(), FailedAttempts: m.failed.Load()}
}

// session is owner's live session, a new one when it has none or its lease lapsed.
func (m *mutex) session(ctx context.Context, owner string) (*concurrency.Session, error) {
	m.mu.Lock()
	s := m.sessions[owner]
	m.mu.Unlock()
	if s != nil {
		select {
		case <-s.Done():
			s.Orphan()
		default:
			return s, nil
		}
	}
	asked := time.Now()
	g, err := m.cli.Grant(ctx, m.lease)
	if err != nil {
		return nil, err
	}
	m.ka.owners.Store(g.ID, owner)
	m.ka.renewed.Store(g.ID, asked)
	s, err = concurrency.NewSession(m.cli, concurrency.WithLease(g.ID), concurrency.WithTTL(int(m.lease)), concurrency.WithContext(m.ctx))
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	m.sessions[owner] = s
	m.mu.Unlock()
	return s, nil
}

// drop forgets owner's session s, whose lease is gone.
func (m *mutex) drop(owner string, s *concurrency.Session) {
	m.mu.Lock()
	if m.sessions[owner] == s {
		delete(m.sessions, owner)
	}
	m.mu.Unlock()
	s.Orphan()
}

func (m *mutex) Acquire(ctx context.Context, key, owner string) (strategies.Lease, error) {
	for {
		s, err := m.session(ctx, owner)
		if err != nil {
			return nil, m.failure(ctx, key, err)
		}
		mx := concurrency.NewMutex(s, key)
		err = mx.Lock(ctx)
		if err == nil {
			return &lease{m: m, s: s, mx: mx, owner: owner, fence: uint64(mx.Header().Revision), id: s.Lease()}, nil
		}
		// Lock deletes its waiting key when its wait fails, but not when the request that
		// made it failed: a key left behind would hold the lock for good while the session lives.
		dctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_, _ = m.cli.Delete(dctx, mx.Key())
		cancel()
		if (errors.Is(err, concurrency.ErrSessionExpired) || errors.Is(err, rpctypes.ErrLeaseNotFound)) && ctx.Err() == nil {
			// The lease lapsed while waiting, or before (a frozen owner's keep-alive has
			// not failed yet): a new session waits again.
			m.drop(owner, s)
			continue
		}
		return nil, m.failure(ctx, key, err)
	}
}

// failure is the error of an acquire that did not get key: ErrNotAcquired when ctx ended.
func (m *mutex) failure(ctx context.Context, key string, err error) error {
	if ctx.Err() != nil {
		m.failed.Add(1)
		return fmt.Errorf("%w: %s: %w", strategies.ErrNotAcquired, key, ctx.Err())
	}
	return fmt.Errorf("etcd-mutex %s: %w", key, err)
}

// Close revokes every session's lease (releasing what they still hold) and closes the
// strategy's client.
func (m *mutex) Close() error {
	m.mu.Lock()
	sessions := m.sessions
	m.sessions = map[string]*concurrency.Session{}
	m.mu.Unlock()
	m.cancel()
	var wg sync.WaitGroup
	for _, s := range sessions {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			s.Orphan()
			_, _ = m.cli.Revoke(ctx, s.Lease())
		})
	}
	wg.Wait()
	return m.cli.Close()
}

// lease is one held etcd-mutex lock.
type lease struct {
	m        *mutex
	s        *concurrency.Session
	mx       *concurrency.Mutex
	owner    string
	fence    uint64
	id       clientv3.LeaseID
	released atomic.Bool
}

// ValidUntil is the earliest the session's lease can lapse: its lease time after the last
// keep-alive that was sent and answered (or the grant).
func (l *lease) ValidUntil() time.Time {
	v, ok := l.m.ka.renewed.Load(l.id)
	if !ok {
		return time.Time{}
	}
	return v.(time.Time).Add(time.Duration(l.m.lease) * time.Second)
}

// Release deletes the lock's key if it is still this lease's (its create revision is the one
// it was made with): a key the server deleted when the lease lapsed is ErrNotOwner.
func (l *lease) Release(ctx context.Context) error {
	if l.released.Swap(true) {
		return strategies.ErrReleased
	}
	resp, err := l.m.cli.Txn(ctx).If(l.mx.IsOwner()).Then(clientv3.OpDelete(l.mx.Key())).Commit()
	if err != nil {
		l.clear()
		return fmt.Errorf("etcd-mutex release %s: %w", l.mx.Key(), err)
	}
	if !resp.Succeeded {
		return fmt.Errorf("%w: %s (the session lease lapsed)", strategies.ErrNotOwner, l.mx.Key())
	}
	return nil
}

// clear makes sure the key of a release that failed (a member killed or cut off under it:
// "request timed out") does not stay behind: the session lives on and keeps it alive, so it
// would hold the lock for every other owner until the run ends. The key is this session's
// own (the prefix and its lease), so deleting it cannot touch another owner's lock. If the
// delete fails too, the session is given up: its lease lapses within the ttl, and the key
// with it.
func (l *lease) clear() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if _, err := l.m.cli.Delete(ctx, l.mx.Key()); err != nil {
		l.m.drop(l.owner, l.s)
	}
}

// Fence is the revision at which the lock was granted: the key's create revision when the
// lock was free, else the revision at which the waiter saw its predecessors gone. Either
// grows from holder to holder, as a fence must.
func (l *lease) Fence() uint64 { return l.fence }

// Lost is closed when the session's lease lapsed or could not be kept alive.
func (l *lease) Lost() <-chan struct{} { return l.s.Done() }

// keepAliver is the client's Lease with KeepAlive replaced by a loop of KeepAliveOnce every
// `every`, each after the BeforeRenew hook of the lease's owner: a frozen owner's lease is
// not renewed. Like the client's own loop it gives a lease up only when the lease could
// really be gone: at once when the server says it is (ErrLeaseNotFound), else once its ttl
// has passed since the last keep-alive it answered. A failed call (a member restarting while
// another answers, a leader election) is retried every retryWait until then.
type keepAliver struct {
	clientv3.Lease
	every    time.Duration
	ttl      time.Duration // the lease's ttl, as granted
	hook     func(ctx context.Context, key, owner string)
	owners   sync.Map // clientv3.LeaseID -> owner
	renewed  sync.Map // clientv3.LeaseID -> time.Time: when its last answered keep-alive was sent
	renewals atomic.Uint64
	failures atomic.Uint64 // leases given up: gone, or not renewed before their lapse
}

// retryWait is the pause between a failed keep-alive and the next, as in the client's loop.
const retryWait = 500 * time.Millisecond

func (k *keepAliver) KeepAlive(ctx context.Context, id clientv3.LeaseID) (<-chan *clientv3.LeaseKeepAliveResponse, error) {
	ch := make(chan *clientv3.LeaseKeepAliveResponse, 1)
	owner := ""
	if v, ok := k.owners.Load(id); ok {
		owner = v.(string)
	}
	last := time.Now()
	if v, ok := k.renewed.Load(id); ok {
		last = v.(time.Time)
	}
	go func() {
		defer close(ch)
		defer k.owners.Delete(id)
		defer k.renewed.Delete(id)
		t := time.NewTimer(k.every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if k.hook != nil {
				k.hook(ctx, "", owner)
			}
			sent := time.Now()
			lapse := last.Add(k.ttl) // the earliest the server can drop the lease
			if ctx.Err() != nil {
				return
			}
			if !sent.Before(lapse) {
				k.failures.Add(1)
				return
			}
			// KeepAliveOnce retries an unavailable member by itself, without end: the
			// lease's lapse bounds it.
			actx, cancel := context.WithDeadline(ctx, lapse)
			resp, err := k.Lease.KeepAliveOnce(actx, id)
			cancel()
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				if errors.Is(err, rpctypes.ErrLeaseNotFound) {
					k.failures.Add(1)
					return
				}
				t.Reset(min(retryWait, time.Until(lapse)))
				continue
			}
			last = sent
			k.renewals.Add(1)
			k.renewed.Store(id, sent)
			select {
			case ch <- resp:
			default:
			}
			t.Reset(k.every)
		}
	}()
	return ch, nil
}
