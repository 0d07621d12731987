package postgres

import (
	"context"
	"fmt"
	"hash/fnv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lockbench/lockbench/strategies"
)

// Name is the strategy's name.
const Name = "pg-advisory"

func init() {
	strategies.Register(strategies.Info{
		Name:              Name,
		Summary:           "PostgreSQL pg_advisory_lock on the owner's own session (a waiter queues in the server); unlock by pg_advisory_unlock on the same session",
		SafeUnlock:        true,
		SafeWithoutFaults: true,
		Source:            "seeds 000, 003 (database lock; github.com/jackc/pgx/v5 v5.12.0)",
		Service:           Service,
		Applies:           []string{"acquire-timeout"},
		NativeWait:        "server queue: its own; pg_advisory_lock blocks in the server, which queues the waiters (PostgreSQL advisory locks); lockbench never sets its wait",
		Weakness:          "no lease: a paused or hung holder keeps the lock as long as its connection lives, and every waiter waits; no fencing token",
	}, newAdvisory)
}

// advisory is pg-advisory: each owner locks on a connection of its own (its session).
// The acquire blocks in the server (pg_advisory_lock queues the waiter and wakes it at the
// unlock); --ttl, --watchdog and --wait do not apply. An acquire whose context ends closes
// its connection — pgx's answer to a cancelled query — and the server drops whatever that
// session was waiting for or held; the owner's next acquire connects again.
type advisory struct {
	info strategies.Info
	conn *Conn

	mu       sync.Mutex
	sessions map[string]*pgx.Conn

	failed   atomic.Uint64
	connects atomic.Uint64
}

func newAdvisory(info strategies.Info, o strategies.Options) (strategies.Strategy, error) {
	conn, ok := o.Service.(*Conn)
	if !ok || conn == nil {
		return nil, &strategies.OptionError{Field: "postgres", Value: fmt.Sprintf("%T", o.Service), Reason: "strategy " + info.Name + " needs a PostgreSQL connection (--postgres, or postgresql installed to spawn one)"}
	}
	return &advisory{info: info, conn: conn, sessions: map[string]*pgx.Conn{}}, nil
}

func (a *advisory) Info() strategies.Info { return a.info }

func (a *advisory) Stats() strategies.Stats {
	return strategies.Stats{FailedAttempts: a.failed.Load()}
}

// LockID is the advisory lock's 64-bit key for a lock name: its FNV-1a hash.
func LockID(key string) int64 {
	h := fnv.New64a()
	h.Write([]byte(key))
	return int64(h.Sum64())
}

// session is owner's live connection, a new one when it has none or it was closed.
func (a *advisory) session(ctx context.Context, owner string) (*pgx.Conn, error) {
	a.mu.Lock()
	pc := a.sessions[owner]
	a.mu.Unlock()
	if pc != nil && !pc.IsClosed() {
		return pc, nil
	}
	pc, err := a.conn.session(ctx)
	if err != nil {
		return nil, err
	}
	a.connects.Add(1)
	a.mu.Lock()
	a.sessions[owner] = pc
	a.mu.Unlock()
	return pc, nil
}

func (a *advisory) Acquire(ctx context.Context, key, owner string) (strategies.Lease, error) {
	pc, err := a.session(ctx, owner)
	if err == nil {
		_, err = pc.Exec(ctx, "SELECT pg_advisory_lock($1)", LockID(key))
	}
	if err != nil {
		if ctx.Err() != nil {
			a.failed.Add(1)
			if pc != nil && !pc.IsClosed() {
				// The lock may have been granted as the context ended: only the session's end
				// is sure to drop it.
				closeQuietly(pc)
			}
			return nil, fmt.Errorf("%w: %s: %w", strategies.ErrNotAcquired, key, ctx.Err())
		}
		return nil, fmt.Errorf("pg-advisory %s: %w", key, err)
	}
	return &lease{pc: pc, id: LockID(key), key: key}, nil
}

// Close closes every session: the server releases their locks.
func (a *advisory) Close() error {
	a.mu.Lock()
	sessions := a.sessions
	a.sessions = map[string]*pgx.Conn{}
	a.mu.Unlock()
	var wg sync.WaitGroup
	for _, pc := range sessions {
		wg.Go(func() { closeQuietly(pc) })
	}
	wg.Wait()
	return nil
}

func closeQuietly(pc *pgx.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = pc.Close(ctx)
}

// lease is one held advisory lock.
type lease struct {
	pc       *pgx.Conn
	id       int64
	key      string
	released atomic.Bool
}

// Abandon is the holder dying with its lock (holder-crash): the session's connection goes,
// as a crashed process's does, and the server drops its locks with it. Nothing is released.
func (l *lease) Abandon() { closeQuietly(l.pc) }

// Release unlocks on the session that locked. pg_advisory_unlock answering false — the
// session does not hold it — or a session that is gone is ErrNotOwner: its lock went with it.
func (l *lease) Release(ctx context.Context) error {
	if l.released.Swap(true) {
		return strategies.ErrReleased
	}
	if l.pc.IsClosed() {
		return fmt.Errorf("%w: %s (its session ended)", strategies.ErrNotOwner, l.key)
	}
	var ok bool
	if err := l.pc.QueryRow(ctx, "SELECT pg_advisory_unlock($1)", l.id).Scan(&ok); err != nil {
		if l.pc.IsClosed() && ctx.Err() == nil {
			return fmt.Errorf("%w: %s (its session ended: %v)", strategies.ErrNotOwner, l.key, err)
		}
		return fmt.Errorf("pg-advisory release %s: %w", l.key, err)
	}
	if !ok {
		return fmt.Errorf("%w: %s", strategies.ErrNotOwner, l.key)
	}
	return nil
}

// Fence is 0: an advisory lock carries no token.
func (l *lease) Fence() uint64 { return 0 }

// ValidUntil is the end of time: the lock has no lease, it lasts as long as the session.
// (Without it the engine would take --ttl for the lease and call a late release a misdelete.)
func (l *lease) ValidUntil() time.Time { return forever }

var forever = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)

// Lost is nil: nothing watches the session while the lock is held.
func (l *lease) Lost() <-chan struct{} { return nil }
