package zookeeper

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/lockbench/lockbench/strategies"
)

// Name is the strategy's name.
const Name = "zk-lock"

// Root is the znode under which zk-lock keeps one parent znode per lock.
const Root = "/lockbench"

func init() {
	strategies.Register(strategies.Info{
		Name:              Name,
		Summary:           "ZooKeeper lock recipe: an ephemeral sequential znode per waiter under the lock's znode; the lowest holds it, each other waiter watches its predecessor",
		SafeUnlock:        true,
		AutoRenew:         true,
		Fencing:           true,
		KeyTTL:            true,
		SafeWithoutFaults: true,
		Source:            "seeds 000, 003 (recipe; github.com/go-zookeeper/zk v1.0.4)",
		Service:           Service,
		Applies:           []string{"ttl", "acquire-timeout"},
		NativeWait:        "watch predecessor: its own; the recipe's watch on the predecessor's znode, woken when it goes (no polling); lockbench never sets its wait (go-zookeeper/zk v1.0.4 lock.go)",
		Weakness:          "a pause longer than the session timeout freezes the pings too: the session expires and the next waiter enters; the znode's sequence fences the late holder where the resource checks it",
	}, newLock)
}

// lock is zk-lock. Each owner (a worker: a ZooKeeper client of its own, as far as the lock
// is concerned) has a session whose timeout is the ttl. Its connection goes through
// frozenConn, which holds every write while a process-pause fault freezes the owner
// (the BeforeRenew hook): its pings stop with it, as they would in a paused process.
type lock struct {
	info    strategies.Info
	conn    *Conn
	timeout time.Duration
	hook    func(ctx context.Context, key, owner string)
	// onSuspended is Conn.LostOnSuspended when the strategy was built.
	onSuspended bool

	ctx    context.Context // ends at Close: frozen writes give up
	cancel context.CancelFunc

	mu     sync.Mutex
	owners map[string]*session

	failed atomic.Uint64
	lost   atomic.Uint64
}

func newLock(info strategies.Info, o strategies.Options) (strategies.Strategy, error) {
	conn, ok := o.Service.(*Conn)
	if !ok || conn == nil {
		return nil, &strategies.OptionError{Field: "zookeeper", Value: fmt.Sprintf("%T", o.Service), Reason: "strategy " + info.Name + " needs a ZooKeeper connection (--zookeeper, or zookeeperd installed to spawn one)"}
	}
	l := &lock{info: info, conn: conn, timeout: o.TTL.Duration(), hook: o.Hooks.BeforeRenew, onSuspended: conn.LostOnSuspended, owners: map[string]*session{}}
	l.ctx, l.cancel = context.WithCancel(context.Background())
	return l, nil
}

func (l *lock) Info() strategies.Info { return l.info }

func (l *lock) Stats() strategies.Stats {
	return strategies.Stats{FailedAttempts: l.failed.Load(), RenewFailures: l.lost.Load()}
}

// session is one owner's ZooKeeper session. lost is closed when ZooKeeper expires it (the
// client then opens a new one, with a new lost).
type session struct {
	zk     *zk.Conn
	mu     sync.Mutex
	lost   chan struct{}
	lostAt time.Time // when lost was last closed
	// suspended is closed when the connection is lost (or the session expires): Curator's
	// SUSPENDED, which it tells users to treat as losing the lock. Reconnected, the client
	// gets a new one for the leases granted from then on.
	suspended chan struct{}
	// left are znodes of abandoned acquires that could not be deleted while the client was
	// between connections (or whose create's reply was lost with the connection): the
	// session lives on, so each would hold its place in the queue, and the lock with it, for
	// good. The session's next acquire deletes them.
	left []leftover
}

// leftover names the znodes of one abandoned acquire: the children of dir whose names
// begin with prefix (its own name, or its create's protected prefix).
type leftover struct{ dir, prefix string }

// leave records znodes to delete once the client is connected again.
func (s *session) leave(dir, prefix string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.left = append(s.left, leftover{dir, prefix})
}

// tidy deletes the znodes left behind; those it still cannot reach stay for next time.
func (s *session) tidy() {
	s.mu.Lock()
	left := s.left
	s.left = nil
	s.mu.Unlock()
	for _, lo := range left {
		children, _, err := s.zk.Children(lo.dir)
		if errors.Is(err, zk.ErrNoNode) {
			continue
		}
		if err != nil {
			s.leave(lo.dir, lo.prefix)
			continue
		}
		for _, c := range children {
			if !strings.HasPrefix(c, lo.prefix) {
				continue
			}
			if err := s.zk.Delete(lo.dir+"/"+c, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
				s.leave(lo.dir, c)
			}
		}
	}
}

func (s *session) lostCh() chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lost
}

func (s *session) expired() {
	s.mu.Lock()
	defer s.mu.Unlock()
	close(s.lost)
	s.lost, s.lostAt = make(chan struct{}), time.Now()
	s.suspend()
}

func (s *session) suspendedCh() chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.suspended
}

// suspend closes suspended once; s.mu is held.
func (s *session) suspend() {
	select {
	case <-s.suspended:
	default:
		close(s.suspended)
	}
}

// state follows the connection: suspended on a disconnect, a fresh channel once the
// session is back.
func (s *session) state(st zk.State) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch st {
	case zk.StateDisconnected:
		s.suspend()
	case zk.StateHasSession:
		select {
		case <-s.suspended:
			s.suspended = make(chan struct{})
		default:
		}
	}
}

// session is owner's session, opened on its first acquire.
func (l *lock) session(owner string) (*session, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if s := l.owners[owner]; s != nil {
		return s, nil
	}
	s := &session{lost: make(chan struct{}), suspended: make(chan struct{})}
	dialer := func(network, address string, timeout time.Duration) (net.Conn, error) {
		if via := l.conn.Via; via != nil {
			address = via(address)
		}
		nc, err := net.DialTimeout(network, address, timeout)
		if err != nil || l.hook == nil {
			return nc, err
		}
		return &frozenConn{Conn: nc, ctx: l.ctx, hook: l.hook, owner: owner}, nil
	}
	cb := func(ev zk.Event) {
		if ev.Type != zk.EventSession {
			return
		}
		if ev.State == zk.StateExpired {
			l.lost.Add(1)
			s.expired()
			return
		}
		s.state(ev.State)
	}
	c, err := l.conn.session(l.timeout, dialer, cb)
	if err != nil {
		return nil, err
	}
	s.zk = c
	l.owners[owner] = s
	return s, nil
}

// parent is the znode of the lock named key: a child of Root (a '/' in the key would make
// another level, so it is escaped).
func parent(key string) string { return Root + "/" + strings.ReplaceAll(key, "/", "%2F") }

// seq is the sequence number ZooKeeper appended to a lock znode's name.
func seq(name string) (int64, error) {
	i := strings.LastIndex(name, "lock-")
	if i < 0 {
		return 0, fmt.Errorf("znode %q is not a lock node", name)
	}
	return strconv.ParseInt(name[i+len("lock-"):], 10, 64)
}

func (l *lock) Acquire(ctx context.Context, key, owner string) (strategies.Lease, error) {
	if err := ctx.Err(); err != nil {
		return nil, l.failure(ctx, key, err)
	}
	s, err := l.session(owner)
	if err != nil {
		return nil, err
	}
	s.tidy()
	dir := parent(key)
	node, err := l.create(ctx, s, dir)
	if err != nil {
		return l.retry(ctx, key, owner, err)
	}
	// After the create: it goes on across a session's expiry, and the lease belongs to the
	// session its znode was made in (one made in the expired session is not found below).
	lost, suspended := s.lostCh(), s.suspendedCh()
	mine, err := seq(node)
	if err != nil {
		return nil, err
	}
	// While the client reconnects, the znode stays where it is in the queue (deleting it
	// would fail too, and a new one behind it would wait on it for good): wait, then look
	// again. A znode gone with an expired session shows as not found below.
	for {
		children, _, err := s.zk.Children(dir)
		if err != nil {
			if !transient(err) || !pause(ctx) {
				return nil, l.giveUp(ctx, s, node, key, err)
			}
			continue
		}
		prev, prevSeq, found := "", int64(-1), false
		for _, c := range children {
			n, err := seq(c)
			if err != nil {
				continue
			}
			if n == mine {
				found = true
			}
			if n < mine && n > prevSeq {
				prev, prevSeq = c, n
			}
		}
		if !found { // our znode went with an expired session: start over in the new one
			return l.Acquire(ctx, key, owner)
		}
		if prev == "" {
			return &lease{l: l, s: s, node: node, fence: uint64(mine) + 1, lost: lost, suspended: suspended, at: time.Now()}, nil
		}
		exists, _, ch, err := s.zk.ExistsW(dir + "/" + prev)
		if err != nil {
			if !transient(err) || !pause(ctx) {
				return nil, l.giveUp(ctx, s, node, key, err)
			}
			continue
		}
		if !exists {
			continue
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, l.giveUp(ctx, s, node, key, ctx.Err())
		}
	}
}

// create makes the waiter's ephemeral sequential znode in dir. Its name begins with a
// token of this attempt's own (ZooKeeper's "protected" create): when the connection is lost
// before the reply, the server may have created it anyway, and a znode nobody waits on
// would hold the lock for as long as the session lives. So, once connected again, create
// looks for its token among dir's children before it creates again. The client's own
// protected create looks only once, at once, while the connection is still down, and then
// gives up.
func (l *lock) create(ctx context.Context, s *session, dir string) (string, error) {
	prefix := "_c_" + rand.Text() + "-"
	for {
		node, err := s.zk.Create(dir+"/"+prefix+"lock-", nil, zk.FlagEphemeral|zk.FlagSequence, l.conn.acl())
		switch {
		case err == nil:
			return node, nil
		case errors.Is(err, zk.ErrNoNode):
			for _, p := range []string{Root, dir} {
				if _, err := s.zk.Create(p, nil, 0, l.conn.acl()); err != nil && !errors.Is(err, zk.ErrNodeExists) {
					return "", fmt.Errorf("zk-lock create %s: %w", p, err)
				}
			}
			continue
		case errors.Is(err, zk.ErrSessionExpired):
			continue // a new session: the znode cannot be there
		case !transient(err):
			return "", err
		}
		for {
			if !pause(ctx) {
				s.leave(dir, prefix)
				return "", err
			}
			children, _, cerr := s.zk.Children(dir)
			if cerr == nil {
				if i := slices.IndexFunc(children, func(c string) bool { return strings.HasPrefix(c, prefix) }); i >= 0 {
					return dir + "/" + children[i], nil
				}
				break // not created: create again
			}
			if !transient(cerr) {
				s.leave(dir, prefix)
				return "", cerr
			}
		}
	}
}

// giveUp deletes the waiter's znode (a znode left behind would hold the lock while the
// session lives; one the client cannot delete now is left to the session's next acquire)
// and returns the acquire's error.
func (l *lock) giveUp(ctx context.Context, s *session, node, key string, err error) error {
	if derr := s.zk.Delete(node, -1); derr != nil && !errors.Is(derr, zk.ErrNoNode) {
		dir, name := path.Split(node)
		s.leave(strings.TrimSuffix(dir, "/"), name)
	}
	return l.failure(ctx, key, err)
}

// pause waits a moment before a request is tried again, and reports false if ctx ended.
func pause(ctx context.Context) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(20 * time.Millisecond):
		return true
	}
}

// retry is Acquire again after a transient error (the client reconnecting, its session
// expired), after a pause, while ctx lasts.
func (l *lock) retry(ctx context.Context, key, owner string, err error) (strategies.Lease, error) {
	if !transient(err) {
		return nil, l.failure(ctx, key, err)
	}
	if !pause(ctx) {
		return nil, l.failure(ctx, key, err)
	}
	return l.Acquire(ctx, key, owner)
}

// failure is the error of an acquire that did not get key: ErrNotAcquired when ctx ended.
func (l *lock) failure(ctx context.Context, key string, err error) error {
	if ctx.Err() != nil {
		l.failed.Add(1)
		return fmt.Errorf("%w: %s: %w", strategies.ErrNotAcquired, key, ctx.Err())
	}
	return fmt.Errorf("zk-lock %s: %w", key, err)
}

// Close closes every session: ZooKeeper deletes their znodes.
func (l *lock) Close() error {
	l.cancel()
	l.mu.Lock()
	owners := l.owners
	l.owners = map[string]*session{}
	l.mu.Unlock()
	var wg sync.WaitGroup
	for _, s := range owners {
		wg.Go(s.zk.Close)
	}
	wg.Wait()
	return nil
}

// lease is one held zk-lock.
type lease struct {
	l         *lock
	s         *session
	node      string
	fence     uint64
	lost      chan struct{}
	suspended chan struct{} // the session's connection lost since the grant
	at        time.Time     // when it was granted
	released  atomic.Bool
}

// ValidUntil is the earliest the session can expire as far as the client knows: a session
// timeout from now while it is connected (its pings keep it alive), from the grant while it
// is not, and when it expired once it has.
func (l *lease) ValidUntil() time.Time {
	select {
	case <-l.lost:
		l.s.mu.Lock()
		defer l.s.mu.Unlock()
		return l.s.lostAt
	default:
	}
	if l.s.zk.State() == zk.StateHasSession {
		return time.Now().Add(l.l.timeout)
	}
	return l.at.Add(l.l.timeout)
}

// Release deletes the lease's znode; one ZooKeeper already deleted with its expired session
// is ErrNotOwner.
//
// A session the server expired while its process was frozen is noticed by the client only
// as it reconnects: while the connection is being re-established, the release waits (until
// ctx ends) for the client to learn either way.
func (l *lease) Release(ctx context.Context) error {
	if l.released.Swap(true) {
		return strategies.ErrReleased
	}
	notOwner := fmt.Errorf("%w: %s (the session expired)", strategies.ErrNotOwner, l.node)
	for {
		select {
		case <-l.lost:
			return notOwner
		default:
		}
		err := l.s.zk.Delete(l.node, -1)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, zk.ErrNoNode):
			return notOwner
		case !transient(err) || ctx.Err() != nil:
			return fmt.Errorf("zk-lock release %s: %w", l.node, err)
		}
		select {
		case <-l.lost:
			return notOwner
		case <-ctx.Done():
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// transient reports whether err is the client being between connections (or sessions): the
// request may succeed once it has reconnected.
func transient(err error) bool {
	return errors.Is(err, zk.ErrNoServer) || errors.Is(err, zk.ErrConnectionClosed) ||
		errors.Is(err, zk.ErrSessionExpired) || errors.Is(err, zk.ErrSessionMoved)
}

// Fence is the znode's sequence number plus one (the first is 0, which means no fence):
// ZooKeeper numbers the lock's children in creation order, so it grows from holder to holder.
func (l *lease) Fence() uint64 { return l.fence }

// Lost is closed when the session the lease was taken in expired, or with
// Conn.LostOnSuspended (when the strategy was built) as soon as its connection was lost (Curator's reading).
func (l *lease) Lost() <-chan struct{} {
	if l.l.onSuspended {
		return l.suspended
	}
	return l.lost
}

// frozenConn holds every write while the fault layer freezes its owner: the session's
// pings stop with the paused process.
type frozenConn struct {
	net.Conn
	ctx   context.Context
	hook  func(ctx context.Context, key, owner string)
	owner string
}

func (c *frozenConn) Write(b []byte) (int, error) {
	c.hook(c.ctx, "", c.owner)
	return c.Conn.Write(b)
}
