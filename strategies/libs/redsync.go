package libs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-redsync/redsync/v4"
	redsyncredis "github.com/go-redsync/redsync/v4/redis"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"
	"github.com/redis/go-redis/v9"

	"github.com/lockbench/lockbench/strategies"
)

// redsyncLock is go-redsync/redsync's Mutex as its README shows it: redsync.New over
// go-redis pools, one NewMutex per lock taken, LockContext, UnlockContext. Over one pool
// it is a token lock (SET NX PX, unlock by a compare-and-delete script); over several it is
// the library's Redlock. Its defaults stay: 32 tries 50-250ms apart (then ErrFailed, counted
// as a timeout even when the acquire timeout is longer), a drift factor of 0.01, ttl*0.05 per
// try and node. The ttl is WithExpiry; with --watchdog, lockbench's watchdog calls its
// ExtendContext.
type redsyncLock struct {
	common
	rs      *redsync.Redsync
	clients []redis.UniversalClient
	opts    []redsync.Option
}

func newRedsync(info strategies.Info, o strategies.Options) (strategies.Strategy, error) {
	if err := noReplicaWait(info, o); err != nil {
		return nil, err
	}
	var clients []redis.UniversalClient
	if info.MultiNode {
		if len(o.NodeConnect) != len(o.Nodes) {
			return nil, &strategies.OptionError{Field: "nodes", Value: fmt.Sprint(len(o.NodeConnect)),
				Reason: fmt.Sprintf("how the %d masters were connected is unknown (Options.NodeConnect)", len(o.Nodes))}
		}
		var err error
		if clients, err = goRedisClients(o.NodeConnect); err != nil {
			return nil, err
		}
	} else {
		c, err := goRedisClient(o.Connect, o.Client.Mode())
		if err != nil {
			return nil, err
		}
		clients = []redis.UniversalClient{c}
	}
	pools := make([]redsyncredis.Pool, len(clients))
	for i, c := range clients {
		pools[i] = goredis.NewPool(c)
	}
	s := &redsyncLock{common: newCommon(info, o), rs: redsync.New(pools...), clients: clients,
		opts: []redsync.Option{redsync.WithExpiry(o.TTL.Duration())}}
	if info.MultiNode {
		s.opts = append(s.opts, redsync.WithDriftFactor(o.DriftFactor))
	}
	return s, nil
}

func (s *redsyncLock) Acquire(ctx context.Context, key, owner string) (strategies.Lease, error) {
	if err := checkKey(key); err != nil {
		return nil, err
	}
	m := s.rs.NewMutex(key, s.opts...)
	if err := m.LockContext(ctx); err != nil {
		var taken *redsync.ErrTaken
		if ctx.Err() == nil && (errors.Is(err, redsync.ErrFailed) || errors.As(err, &taken)) {
			// Its tries ran out: the library gave up on its own.
			return nil, notAcquired(key, err)
		}
		return nil, s.acquireErr(ctx, key, err)
	}
	return s.newLease(&redsyncLease{m: m}, key, owner, m.Until()), nil
}

func (s *redsyncLock) Close() error { return closeAll(s.clients) }

// redsyncLease is a locked Mutex. Only one goroutine touches m at a time: the watchdog
// while it renews, the holder once it has stopped it.
type redsyncLease struct{ m *redsync.Mutex }

func (l *redsyncLease) release(ctx context.Context) error {
	ok, err := l.m.UnlockContext(ctx)
	if ok {
		return nil
	}
	var rerr *redsync.RedisError
	if err != nil && errors.As(err, &rerr) {
		return err // a node did not answer: whether it still holds the lock is unknown
	}
	return errNotOwner(err) // gone (ErrLockAlreadyExpired) or taken by someone else
}

func (l *redsyncLease) renew(ctx context.Context, _ time.Time) (time.Time, bool, error) {
	ok, err := l.m.ExtendContext(ctx)
	if ok {
		return l.m.Until(), true, nil
	}
	var rerr *redsync.RedisError
	if err != nil && errors.As(err, &rerr) {
		return time.Time{}, false, err
	}
	return time.Time{}, false, nil // the majority no longer holds our value
}

// noReplicaWait refuses --wait-replicas: no library here waits for replicas.
func noReplicaWait(info strategies.Info, o strategies.Options) error {
	if o.WaitReplicas > 0 {
		return &strategies.OptionError{Field: "wait-replicas", Value: fmt.Sprint(o.WaitReplicas),
			Reason: info.Name + " cannot wait for replicas: the library has no such option; use it with the lock core's strategies"}
	}
	return nil
}
