package strategies

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"errors"
	"hash/maphash"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/rueidis"
)

// notifier is the pubsub wait policy's side of a process.
//
// Subscriptions: one dedicated connection carries the subscriptions of every lock that has
// local waiters (Redisson's known pitfall is a connection per lock). A channel is subscribed
// while someone waits on it, and lingers a little after the last waiter leaves so that a hot
// lock is not re-subscribed per acquire.
//
// Local queue: the waiters of one lock in this process form a FIFO. A waiter registers
// before its first attempt; while others wait ahead of it, it does not try at all, so that
// only the head contends with Redis.
//
// Turns across processes (issue 20: a process that handed its releases to its own waiters
// starved the others). Anonymous waiters listen on a channel of their process's own per lock,
// and a process with such waiters is a member of the lock's list of waiting processes in
// Redis ({lock}:pw, turn.lua), joined with the channel's first SUBSCRIBE and left when the
// channel's linger ends. A process's turn lasts turnStreak acquires: within it, token's
// release hands the lock to the process's next waiter at once, in the release's own script.
// Its last release passes the turn round robin over that list: to another process by a
// message on its channel, which wakes its longest-waiting local waiter, or, when the turn is
// the releaser's own again (a single process, or the others had theirs), to the next local
// waiter. So no process serves its own waiters for more than a short streak while another
// process waits, and a release still costs one round trip.
// A process given a turn it cannot use (it only lingers) passes it on. The list expires a ttl
// after the last release or join; a waiter whose timer fires joins again.
//
// Waiters registered with an id (the fair lock's) share one channel per lock, on which a
// message carries the id of the waiter it wakes.
//
// Waiters never depend on messages for liveness: the wait loop always sleeps on a timer too.
type notifier struct {
	c       rueidis.Client // where the locks' keys live: the turn lists
	src     rueidis.Client // where subscriptions go
	id      string         // this process's suffix of its turn channels
	ttlArg  string         // the turn lists' ttl, in ms: the locks' ttl
	counted string         // turn.lua's ARGV[3]: "1" when PUBLISH counts the receivers

	mu     sync.Mutex
	conn   rueidis.DedicatedClient
	free   func() // returns conn to the pool, which unsubscribes everything
	broken bool   // conn reported a disconnect; reconnect on the next subscribe
	gen    uint64 // counts connections; confirmations from an older one are ignored
	chans  map[string]*subscription
	closed bool
	stop   chan struct{} // ends the sweeper

	// busy counts registered waiters per hash bucket of lock keys, so that an acquire on a
	// lock nobody here waits for takes the fast path without the lock or the map.
	busy [64]atomic.Int32
	seed maphash.Seed

	messages, subscribes atomic.Uint64
}

type subscription struct {
	pw      string        // the lock's list of waiting processes, for a turn channel; else ""
	waiters []*waiter     // FIFO, by registration
	ready   chan struct{} // closed on the first SUBSCRIBE confirmation on the current connection
	sent    int           // SUBSCRIBE commands sent for this entry
	acked   int           // confirmations received
	idle    time.Time     // when the last waiter left
	refused error         // the server's refusal of a SUBSCRIBE (NOPERM) since the last confirmation, for the waiters it woke
	streak  int           // acquires this process made in a row in its current turn, less one
}

type waiter struct {
	key, ch string
	id      string        // "" = woken by release announcements; else only by this payload
	owner   string        // whom a handover acquires the lock for
	wake    chan struct{} // capacity 1: a wake-up is never lost, never doubled
	sub     *subscription
	ahead   int  // local waiters registered before this one, when it registered
	covered bool // the channel was subscribed when it registered: no release can be missed

	// Handover, under notifier.mu: a release by this process may acquire the lock for w.
	reserved bool  // a release is acquiring the lock for w now
	granted  Lease // acquired for w, not taken yet
	gone     bool  // w left the queue
}

// notifyLinger is how long a channel stays subscribed with nobody waiting on it.
const notifyLinger = 500 * time.Millisecond

func newNotifier(c rueidis.Client, ttlArg string) (*notifier, error) {
	if c == nil {
		return nil, &OptionError{Field: "client", Value: "nil", Reason: "the pubsub wait policy needs a Redis client"}
	}
	var nonce [6]byte
	_, _ = crand.Read(nonce[:])
	n := &notifier{
		c: c, src: subscribeNode(c), id: hex.EncodeToString(nonce[:]), ttlArg: ttlArg,
		counted: "1", chans: make(map[string]*subscription), stop: make(chan struct{}), seed: maphash.MakeSeed(),
	}
	if c.Mode() == rueidis.ClientModeCluster {
		n.counted = "" // a node counts its own subscribers only
	}
	go n.sweep()
	return n, nil
}

// subscribeNode picks the node to subscribe on. PUBLISH in a Redis Cluster reaches every
// node, so for a cluster any fixed node will do.
func subscribeNode(c rueidis.Client) rueidis.Client {
	if c.Mode() != rueidis.ClientModeCluster {
		return c
	}
	nodes := c.Nodes()
	addrs := make([]string, 0, len(nodes))
	for a := range nodes {
		addrs = append(addrs, a)
	}
	if len(addrs) == 0 {
		return c
	}
	sort.Strings(addrs)
	return nodes[addrs[0]]
}

var errNotifierClosed = errors.New("pubsub notifier closed")

// turnPrefix starts every turn channel: turnPrefix + lock name + ":" + process id.
const turnPrefix = "lockbench:turn:"

// turnChannel is where this process's anonymous waiters for key are told it is their turn;
// it is also the process's member in the lock's list of waiting processes.
func (n *notifier) turnChannel(key string) string { return turnPrefix + key + ":" + n.id }

// waitList is the lock's list of waiting processes, in the lock's hash slot.
func waitList(key string) string { return hashTagged(key) + ":pw" }

func (n *notifier) bucket(key string) *atomic.Int32 {
	return &n.busy[maphash.String(n.seed, key)%uint64(len(n.busy))]
}

// waiting reports whether a waiter of this process may be queued for key (false positives
// are possible, false negatives are not).
func (n *notifier) waiting(key string) bool { return n.bucket(key).Load() > 0 }

// enter registers a waiter for key on ch without talking to Redis: it joins the local FIFO
// and learns how many wait ahead of it and whether the channel is already subscribed.
func (n *notifier) enter(key, ch, id, owner string) (*waiter, error) {
	w := &waiter{key: key, ch: ch, id: id, owner: owner, wake: make(chan struct{}, 1)}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return nil, errNotifierClosed
	}
	s := n.chans[ch]
	if s == nil {
		s = &subscription{ready: make(chan struct{})}
		if id == "" {
			s.pw = waitList(key)
		}
		n.chans[ch] = s
	}
	w.sub, w.ahead = s, len(s.waiters)
	select {
	case <-s.ready:
		w.covered = !n.broken
	default:
	}
	s.waiters = append(s.waiters, w)
	n.bucket(key).Add(1)
	return w, nil
}

// subscribe makes sure w's channel is subscribed and returns once the subscription is
// confirmed, so that any release announced after it returns reaches w. A connection found
// dead, or replaced while w waited for its confirmation, is dealt with twice before the
// error is returned.
func (n *notifier) subscribe(ctx context.Context, w *waiter) error {
	var err error
	for range 3 {
		if err = n.trySubscribe(ctx, w); err == nil || ctx.Err() != nil || errors.Is(err, errNotifierClosed) {
			return err
		}
		if _, refused := rueidis.IsRedisErr(err); refused {
			return err // the server said no (NOPERM): asking again hears the same
		}
	}
	return err
}

// errResubscribing: the connection was replaced while a waiter waited for a confirmation; its
// channel is being subscribed again on the new one.
var errResubscribing = errors.New("pubsub connection replaced; subscribing again")

func (n *notifier) trySubscribe(ctx context.Context, w *waiter) error {
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return errNotifierClosed
	}
	resubscribe, stale := n.connectLocked()
	s := w.sub
	first := s.sent == 0
	if first {
		s.sent = 1
	}
	conn, ready := n.conn, s.ready
	n.mu.Unlock()

	// Never talk to Redis under n.mu: the connection's reader may be waiting in a hook for it.
	if stale != nil {
		stale()
	}
	if len(resubscribe) > 0 {
		n.send(conn, rueidis.Commands{conn.B().Subscribe().Channel(resubscribe...).Build()})
	}
	if first {
		// The process joins the lock's waiting processes once Redis confirmed the SUBSCRIBE,
		// not beside it: a turn published to the channel before then reaches nobody, and
		// turn.lua drops a member nobody listens to as a process gone, whose waiters would
		// then sleep out their timers while the others take turns.
		n.subscribes.Add(1)
		sent := make(chan error, 1)
		go func() {
			err := n.sendSubscribe(conn, w.ch)
			if err == nil && s.pw != "" {
				err = n.join(context.Background(), s.pw, w.ch)
			}
			sent <- err
		}()
		select {
		case err := <-sent:
			if err != nil {
				return err
			}
		case <-ctx.Done():
			return ctx.Err() // the SUBSCRIBE goes on; its confirmation serves the next waiter
		}
	}
	select {
	case <-ready:
	case <-ctx.Done():
		return ctx.Err()
	}
	n.mu.Lock()
	replaced, refused := s.ready != ready, s.refused
	n.mu.Unlock()
	switch {
	case replaced && refused != nil:
		return refused // the SUBSCRIBE it waited for was refused
	case replaced:
		return errResubscribing
	}
	return nil
}

// leave unregisters w. A release wake-up w received but did not use goes to the next waiter;
// a lock handed over to w that it did not take is returned, for the caller to release.
func (n *notifier) leave(w *waiter) (untaken Lease) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.bucket(w.key).Add(-1)
	w.gone = true
	s := w.sub
	if i := slices.Index(s.waiters, w); i >= 0 {
		s.waiters = slices.Delete(s.waiters, i, i+1)
	}
	untaken, w.granted = w.granted, nil // the caller's release of it passes the lock on
	if w.id == "" && untaken == nil {
		select {
		case <-w.wake:
			if !s.wakeOne() && s.pw != "" {
				go n.passOn(s.pw, w.ch) // it may have been this process's turn
			}
		default:
		}
	}
	if len(s.waiters) == 0 {
		s.idle = time.Now()
		if s.sent == 0 && n.chans[w.ch] == s {
			delete(n.chans, w.ch) // never subscribed: nothing to linger for
		}
	}
	return untaken
}

// turnStreak is how many acquires in a row a process's waiters make of a lock while other
// processes wait for it too, before the turn moves on. A turn that goes to another process
// costs a message, that process's wake-up and its waiter's SET NX, several times what a
// handoff to a local waiter inside the release script costs; a streak spreads that over many
// acquires while every process still gets its turn each round (fairness across processes is
// judged over the run, not over one acquire): with 4 processes of 25 workers on one key, a
// waiter waits about 100 holds whatever the streak. Measured there (hold 1 ms, 2 cores), 16
// held the fleet at 825-839 acquires/s where 4 gave 785-821 and 1 about 700. 1 would pass
// the turn on every release.
const turnStreak = 16

// reserveNext picks the waiter that a release by this process can acquire the lock for,
// pipelined behind the release: the longest-waiting anonymous one not already served. nil
// when there is none. keep says whether the process's turn lasts for that handoff (its
// streak is below turnStreak), so that the release need not pass the turn round.
func (n *notifier) reserveNext(ch string) (w *waiter, keep bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	s := n.chans[ch]
	if s == nil {
		return nil, false
	}
	for _, w := range s.waiters {
		if w.id == "" && !w.reserved && w.granted == nil {
			w.reserved = true
			return w, s.streak+1 < turnStreak
		}
	}
	s.streak = 0 // the release passes the turn on
	return nil, false
}

// handOver ends w's reservation with l, the lock acquired for it, or nil when the
// acquire failed; kept says whether the handoff continued this process's turn. It reports
// whether w got l; false when l is nil or w left meanwhile, and then the caller releases l
// or wakes a waiter the usual way.
func (n *notifier) handOver(w *waiter, l Lease, kept bool) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	w.reserved = false
	if l != nil && kept {
		w.sub.streak++
	} else {
		w.sub.streak = 0 // a new turn, here or elsewhere
	}
	if l == nil || w.gone {
		return false
	}
	w.granted = l
	select {
	case w.wake <- struct{}{}:
	default: // a wake-up is pending already; the wait loop takes the lease on it
	}
	return true
}

// take returns the lock handed over to w, if there is one.
func (n *notifier) take(w *waiter) Lease {
	n.mu.Lock()
	defer n.mu.Unlock()
	l := w.granted
	w.granted = nil
	return l
}

// hasWaiters reports whether an anonymous waiter of this process waits on ch.
func (n *notifier) hasWaiters(ch string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	s := n.chans[ch]
	return s != nil && slices.ContainsFunc(s.waiters, func(w *waiter) bool { return w.id == "" })
}

// released is this process's turn after its own release of the lock of ch: the next local
// waiter is woken now. It reports whether one was; when none was, the turn is passed on.
func (n *notifier) released(key, ch string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if s := n.chans[ch]; s != nil && s.wakeOne() {
		return true
	}
	go n.passOn(waitList(key), ch) // the waiter left meanwhile
	return false
}

// wakeLocal wakes one local waiter of ch if there is one; unlike released, it passes no
// turn on when there is none.
func (n *notifier) wakeLocal(ch string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if s := n.chans[ch]; s != nil {
		s.wakeOne()
	}
}

// wakeOne wakes the longest-waiting anonymous waiter that has no wake-up pending, and
// reports whether an anonymous waiter now has one (a waiter already woken will try anyway).
// Waiters with an id are woken by their id only: for them a wake-up carries meaning.
func (s *subscription) wakeOne() bool {
	pending := false
	for _, w := range s.waiters {
		if w.id != "" {
			continue
		}
		select {
		case w.wake <- struct{}{}:
			return true
		default:
			pending = true
		}
	}
	return pending
}

func (n *notifier) onMessage(m rueidis.PubSubMessage) {
	n.messages.Add(1)
	n.mu.Lock()
	defer n.mu.Unlock()
	s := n.chans[m.Channel]
	if s == nil {
		if key, ok := n.turnKey(m.Channel); ok {
			go n.passOn(waitList(key), m.Channel) // a turn that came as the channel was let go
		}
		return
	}
	if s.pw != "" {
		if !s.wakeOne() {
			go n.passOn(s.pw, m.Channel) // lingering: nobody here wants the lock now
		}
		return
	}
	for _, w := range s.waiters {
		if w.id == m.Message {
			select {
			case w.wake <- struct{}{}:
			default:
			}
			return
		}
	}
}

// turnKey returns the lock name of one of this process's turn channels.
func (n *notifier) turnKey(ch string) (string, bool) {
	key, ok := strings.CutPrefix(ch, turnPrefix)
	if !ok {
		return "", false
	}
	return strings.CutSuffix(key, ":"+n.id)
}

// join makes this process, whose member is ch, a waiting process of the lock (join.lua).
// It runs on its own deadline, like sendSubscribe: it serves every waiter on ch.
func (n *notifier) join(ctx context.Context, pw, ch string) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), subscribeTimeout)
	defer cancel()
	return joinScript.Exec(ctx, n.c, []string{pw}, []string{ch, n.ttlArg}).Error()
}

// rejoin joins again for w, whose wait timed out: the list may have expired (no release or
// join for a ttl) or lost this process, which would then get no turns.
func (n *notifier) rejoin(ctx context.Context, w *waiter) {
	if w.sub.pw != "" {
		_ = n.join(ctx, w.sub.pw, w.ch)
	}
}

// passOn gives a turn this process cannot use to the next waiting process (turn.lua without
// a lock). It runs on a goroutine of its own: never under n.mu, never in a pubsub hook.
func (n *notifier) passOn(pw, ch string) {
	ctx, cancel := context.WithTimeout(context.Background(), subscribeTimeout)
	defer cancel()
	_ = turnScript.Exec(ctx, n.c, []string{pw}, []string{ch, "", n.counted, n.ttlArg}).Error()
}

// leaveLists takes this process out of the waiting lists of channels it no longer listens on.
func (n *notifier) leaveLists(chans map[string]string, timeout time.Duration) {
	if len(chans) == 0 {
		return
	}
	cmds := make(rueidis.Commands, 0, len(chans))
	for ch, pw := range chans {
		cmds = append(cmds, n.c.B().Lrem().Key(pw).Count(0).Element(ch).Build())
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	n.c.DoMulti(ctx, cmds...)
}

// onSubscription counts the confirmations of connection gen. A confirmation still in flight
// on a connection that was replaced says nothing about the new one.
func (n *notifier) onSubscription(gen uint64, e rueidis.PubSubSubscription) {
	if e.Kind != "subscribe" {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if gen != n.gen {
		return
	}
	if s := n.chans[e.Channel]; s != nil && s.acked < s.sent {
		s.acked++
		if s.acked == 1 {
			s.refused = nil
			close(s.ready)
		}
	}
}

// connectLocked makes sure a working connection carries the hooks. After a reconnect it
// returns the channels to subscribe again (their waiters keep sleeping on their timers until
// then) and the old connection's release, which the caller runs after unlocking n.mu.
func (n *notifier) connectLocked() (resubscribe []string, stale func()) {
	if n.conn != nil && !n.broken {
		return nil, nil
	}
	stale = n.free
	conn, free := n.src.Dedicate()
	n.conn, n.free, n.broken = conn, free, false
	n.gen++
	gen := n.gen
	gone := conn.SetPubSubHooks(rueidis.PubSubHooks{
		OnMessage:      n.onMessage,
		OnSubscription: func(e rueidis.PubSubSubscription) { n.onSubscription(gen, e) },
	})
	go func() {
		<-gone
		n.mu.Lock()
		if n.conn == conn {
			n.broken = true
		}
		n.mu.Unlock()
	}()
	for ch, s := range n.chans {
		if s.sent == 0 {
			continue // not subscribed yet: its first subscribe does it
		}
		resubscribe = append(resubscribe, ch)
		s.sent, s.acked = 1, 0
		// Until the new connection confirms it, nobody may count on this channel: a fresh
		// ready makes new waiters subscribe and wait, and wakes those waiting on the old
		// one, which died with its connection, to wait on the new.
		old := s.ready
		s.ready = make(chan struct{})
		select {
		case <-old:
		default:
			close(old)
		}
	}
	return resubscribe, stale
}

// sweep unsubscribes channels nobody has waited on for notifyLinger.
func (n *notifier) sweep() {
	t := time.NewTicker(notifyLinger / 2)
	defer t.Stop()
	for {
		select {
		case <-n.stop:
			return
		case <-t.C:
		}
		var idle []string
		lists := make(map[string]string) // turn channel -> its waiting list, to leave
		n.mu.Lock()
		conn := n.conn
		for ch, s := range n.chans {
			if len(s.waiters) == 0 && s.acked == s.sent && time.Since(s.idle) >= notifyLinger {
				if s.sent > 0 {
					idle = append(idle, ch)
					if s.pw != "" {
						lists[ch] = s.pw
					}
				}
				delete(n.chans, ch)
			}
		}
		n.mu.Unlock()
		if len(idle) == 0 || conn == nil {
			continue
		}
		n.send(conn, rueidis.Commands{conn.B().Unsubscribe().Channel(idle...).Build()})
		n.leaveLists(lists, subscribeTimeout)
		// A waiter that came for one of these channels meanwhile may have had its SUBSCRIBE
		// and join sent before the UNSUBSCRIBE and the leave, which then undid them:
		// subscribe and join those once more.
		var again []string
		n.mu.Lock()
		for _, ch := range idle {
			if s := n.chans[ch]; s != nil && s.sent > 0 && n.conn == conn {
				s.sent++ // the extra confirmation is expected, not a stray one
				again = append(again, ch)
			}
		}
		n.mu.Unlock()
		if len(again) > 0 {
			n.send(conn, rueidis.Commands{conn.B().Subscribe().Channel(again...).Build()})
			for _, ch := range again {
				if pw := lists[ch]; pw != "" {
					_ = n.join(context.Background(), pw, ch)
				}
			}
		}
	}
}

// sendSubscribe subscribes ch on conn and returns once Redis confirmed it. It runs on its
// own deadline, not the waiter's: a SUBSCRIBE abandoned when one acquire timed out may or
// may not have been sent, and nobody could count on the channel after that. Only a failure
// of the connection itself marks it broken, for the next subscribe to replace.
func (n *notifier) sendSubscribe(conn rueidis.DedicatedClient, ch string) error {
	ctx, cancel := context.WithTimeout(context.Background(), subscribeTimeout)
	defer cancel()
	err := conn.Do(ctx, conn.B().Subscribe().Channel(ch).Build()).Error()
	if err != nil {
		n.mu.Lock()
		if _, refused := rueidis.IsRedisErr(err); refused {
			n.refusedLocked(ch, err)
		} else if n.conn == conn {
			n.broken = true // the next subscribe reconnects and subscribes this channel again
		}
		n.mu.Unlock()
	}
	return err
}

// refusedLocked undoes a SUBSCRIBE of ch that the server refused (NOPERM: the user has no
// right on the channel): the channel counts as never subscribed, so that the next waiter
// sends it again and hears the refusal itself, and the waiters already waiting for its
// confirmation, which will never come, are woken to do so — rather than sleeping out
// their acquire timeout, unseen. The connection itself is fine.
func (n *notifier) refusedLocked(ch string, err error) {
	s := n.chans[ch]
	if s == nil || s.sent == 0 {
		return
	}
	s.sent, s.acked, s.refused = 0, 0, err
	old := s.ready
	s.ready = make(chan struct{})
	select {
	case <-old:
	default:
		close(old)
	}
}

// subscribeTimeout bounds a subscription command on the shared connection; past it the
// connection counts as dead.
const subscribeTimeout = 5 * time.Second

// send fires subscription commands whose confirmations arrive through the hooks; a failure
// surfaces as a disconnect, which the next subscribe repairs.
func (n *notifier) send(conn rueidis.DedicatedClient, cmds rueidis.Commands) {
	ctx, cancel := context.WithTimeout(context.Background(), subscribeTimeout)
	defer cancel()
	conn.DoMulti(ctx, cmds...)
}

func (n *notifier) close() {
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return
	}
	n.closed = true
	close(n.stop)
	free := n.free
	n.conn, n.free = nil, nil
	lists := make(map[string]string)
	for ch, s := range n.chans {
		if s.pw != "" && s.sent > 0 {
			lists[ch] = s.pw
		}
	}
	n.mu.Unlock()
	if free != nil {
		free()
	}
	n.leaveLists(lists, time.Second) // turns no longer go to a process that closed

}
