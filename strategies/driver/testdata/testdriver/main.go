// Command testdriver is the driver protocol's test double (docs/drivers.md), built by the
// tests of package driver. Its first argument picks the lock:
//
//	null   grants from a lock table in its own memory (ttl and fences kept): the protocol's
//	       own cost, with no Redis behind it
//	token  the token lock on the run's Redis through rueidis: SET key token NX PX ttl, retried
//	       every 1ms (lockbench's token with --wait spin:1ms); compare-and-delete release;
//	       renewal by compare-and-pexpire. With TESTDRIVER_SELF_RENEW=1 it also renews each
//	       lock it holds by itself every ttl/3, as a library's own extension does, and
//	       reports each renewal (extended) and a failed one (lost); abandon stops it.
//
// and the rest misbehave on purpose: die-after N (exit 3 with a line on stderr at the N-th
// acquire), hang-after N (stop answering), garbage-after N (write a line that is not JSON),
// silent (no hello). With TESTDRIVER_CHAIN=1 its hello says it supports chain: a release
// may carry the next acquire ("then"), begun as soon as the release is done; with
// TESTDRIVER_CHAINFILE set too, it writes there how many releases carried one when its
// stdin closes. With TESTDRIVER_PIDFILE set it starts a child (sleep) in its process
// group and writes both pids there, so that a test can check that nothing outlives it. With
// TESTDRIVER_PIDDIR set, each driver that is not a probe writes a file named by its pid
// there, with its Redis address and its parent's pid, so that a test can tell which
// process of a fleet started it.
package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"time"

	"github.com/redis/rueidis"
)

type request struct {
	Type      string   `json:"type"`
	ID        uint64   `json:"id"`
	Worker    string   `json:"worker"`
	Key       string   `json:"key"`
	TTLMS     int64    `json:"ttl_ms"`
	TimeoutMS int64    `json:"timeout_ms"`
	Lease     string   `json:"lease"`
	Then      *request `json:"then"`
}

type reply struct {
	Type    string `json:"type"`
	ID      uint64 `json:"id,omitempty"`
	Lease   string `json:"lease,omitempty"`
	Fence   uint64 `json:"fence,omitempty"`
	Message string `json:"message,omitempty"`
}

var (
	outMu sync.Mutex
	out   = bufio.NewWriter(os.Stdout)
)

func send(r reply) {
	b, _ := json.Marshal(r)
	outMu.Lock()
	out.Write(append(b, '\n'))
	out.Flush()
	outMu.Unlock()
}

type locker interface {
	acquire(ctx context.Context, key string, ttl time.Duration) (lease string, fence uint64, err error)
	release(lease string) (bool, error)
	renew(lease string, ttl time.Duration) (bool, error)
	abandon(lease string)
}

func main() {
	mode := "null"
	if len(os.Args) > 1 {
		mode = os.Args[1]
	}
	misbehave, after := "", 0
	if len(os.Args) > 3 {
		misbehave = os.Args[2]
		after, _ = strconv.Atoi(os.Args[3])
	}
	if misbehave == "silent" {
		select {}
	}
	if f := os.Getenv("TESTDRIVER_PIDFILE"); f != "" {
		child := exec.Command("sleep", "600")
		if err := child.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.WriteFile(f, fmt.Appendf(nil, "%d %d\n", os.Getpid(), child.Process.Pid), 0o644)
	}
	if d := os.Getenv("TESTDRIVER_PIDDIR"); d != "" && os.Getenv("LOCKBENCH_DRIVER_PROBE") == "" {
		os.WriteFile(fmt.Sprintf("%s/%d", d, os.Getpid()), fmt.Appendf(nil, "%s %d\n", os.Getenv("LOCKBENCH_REDIS_ADDR"), os.Getppid()), 0o644)
	}
	var l locker
	supports := map[string]bool{"fencing": mode == "null", "renewal": true, "chain": os.Getenv("TESTDRIVER_CHAIN") == "1"}
	switch mode {
	case "null":
		l = &table{locks: map[string]*held{}, byLease: map[string]string{}, fences: map[string]uint64{}}
	case "token":
		if os.Getenv("LOCKBENCH_DRIVER_PROBE") == "" {
			t, err := newTokenLock()
			if err != nil {
				fmt.Fprintln(os.Stderr, "testdriver:", err)
				os.Exit(1)
			}
			l = t
		}
	default:
		fmt.Fprintln(os.Stderr, "testdriver: unknown mode", mode)
		os.Exit(2)
	}
	send0, _ := json.Marshal(map[string]any{"type": "hello", "protocol": 1, "name": "testdriver " + mode,
		"version": "testdriver 1 (" + mode + ")", "supports": supports})
	os.Stdout.Write(append(send0, '\n'))

	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 64<<10), 64<<10)
	acquires, chained := 0, 0
	if f := os.Getenv("TESTDRIVER_CHAINFILE"); f != "" && os.Getenv("LOCKBENCH_DRIVER_PROBE") == "" {
		defer func() { os.WriteFile(f, fmt.Appendf(nil, "%d\n", chained), 0o644) }()
	}
	for in.Scan() {
		var req request
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			fmt.Fprintln(os.Stderr, "testdriver: bad request:", err)
			os.Exit(1)
		}
		if req.Then != nil {
			chained++
		}
		if req.Type == "acquire" || req.Then != nil {
			acquires++
			if misbehave != "" && acquires >= after {
				switch misbehave {
				case "die-after":
					fmt.Fprintln(os.Stderr, "testdriver: dying as asked")
					os.Exit(3)
				case "hang-after":
					select {}
				case "garbage-after":
					outMu.Lock()
					out.WriteString("this is not json\n")
					out.Flush()
					outMu.Unlock()
					select {}
				}
			}
		}
		handle(l, req)
	}
}

// handle answers req on the reading goroutine when inline can, else on a goroutine of its
// own; an acquire a release carries (then) follows the release's reply.
func handle(l locker, req request) {
	if inline(l, req) {
		if t := req.Then; t != nil {
			t.Type = "acquire"
			if !inline(l, *t) {
				go serve(l, *t)
			}
		}
		return
	}
	go func() {
		serve(l, req)
		if t := req.Then; t != nil {
			t.Type = "acquire"
			serve(l, *t)
		}
	}()
}

// inline answers, on the reading goroutine, what the null lock does without waiting: a
// ping, a release, a renewal, an abandon, and an acquire of a free key. Only an acquire
// that must wait gets a goroutine of its own, as the protocol requires (the reading never
// blocks). A goroutine per request would cost a hand-off between threads per request,
// which on a busy machine was most of the protocol's round trip.
func inline(l locker, req request) bool {
	t, ok := l.(*table)
	if !ok && req.Type != "ping" {
		return false
	}
	if req.Type == "acquire" {
		lease, fence, ok := t.try(req.Key, time.Duration(req.TTLMS)*time.Millisecond)
		if !ok {
			return false
		}
		send(reply{Type: "granted", ID: req.ID, Lease: lease, Fence: fence})
		return true
	}
	serve(l, req)
	return true
}

func serve(l locker, req request) {
	switch req.Type {
	case "ping":
		send(reply{Type: "pong", ID: req.ID})
	case "acquire":
		ctx, cancel := context.WithTimeout(context.Background(), time.Duration(req.TimeoutMS)*time.Millisecond)
		defer cancel()
		lease, fence, err := l.acquire(ctx, req.Key, time.Duration(req.TTLMS)*time.Millisecond)
		switch {
		case err == context.DeadlineExceeded:
			send(reply{Type: "timeout", ID: req.ID})
		case err != nil:
			send(reply{Type: "error", ID: req.ID, Message: err.Error()})
		default:
			send(reply{Type: "granted", ID: req.ID, Lease: lease, Fence: fence})
		}
	case "release":
		ok, err := l.release(req.Lease)
		send(outcome(req.ID, "released", ok, err))
	case "renew":
		ok, err := l.renew(req.Lease, time.Duration(req.TTLMS)*time.Millisecond)
		send(outcome(req.ID, "renewed", ok, err))
	case "abandon":
		l.abandon(req.Lease)
		send(reply{Type: "abandoned", ID: req.ID})
	default:
		send(reply{Type: "error", ID: req.ID, Message: "unknown request " + req.Type})
	}
}

func outcome(id uint64, done string, ok bool, err error) reply {
	switch {
	case err != nil:
		return reply{Type: "error", ID: id, Message: err.Error()}
	case !ok:
		return reply{Type: "not_owner", ID: id}
	}
	return reply{Type: done, ID: id}
}

func newID() string {
	b := make([]byte, 12)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// table is the null lock: a table in memory, one waiter list per key.
type table struct {
	mu      sync.Mutex
	locks   map[string]*held
	byLease map[string]string // lease -> key
	fences  map[string]uint64
}

type held struct {
	lease   string
	expires time.Time
	freed   chan struct{} // closed when the lock is released
}

// try takes key if it is free (or its holder's ttl ran out); otherwise ok is false.
func (t *table) try(key string, ttl time.Duration) (lease string, fence uint64, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	lease, fence, _, _ = t.tryLocked(key, ttl)
	return lease, fence, lease != ""
}

// tryLocked is try under t.mu; when the key is held it returns what to wait for.
func (t *table) tryLocked(key string, ttl time.Duration) (string, uint64, chan struct{}, time.Duration) {
	h := t.locks[key]
	if h != nil && !time.Now().After(h.expires) {
		return "", 0, h.freed, time.Until(h.expires)
	}
	if h != nil {
		delete(t.byLease, h.lease)
		close(h.freed)
	}
	lease := newID()
	t.locks[key] = &held{lease: lease, expires: time.Now().Add(ttl), freed: make(chan struct{})}
	t.byLease[lease] = key
	t.fences[key]++
	return lease, t.fences[key], nil, 0
}

func (t *table) acquire(ctx context.Context, key string, ttl time.Duration) (string, uint64, error) {
	for {
		t.mu.Lock()
		lease, f, freed, until := t.tryLocked(key, ttl)
		t.mu.Unlock()
		if lease != "" {
			return lease, f, nil
		}
		timer := time.NewTimer(until)
		select {
		case <-freed:
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			return "", 0, ctx.Err()
		}
		timer.Stop()
	}
}

func (t *table) release(lease string) (bool, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	key, ok := t.byLease[lease]
	if !ok {
		return false, nil
	}
	h := t.locks[key]
	delete(t.byLease, lease)
	delete(t.locks, key)
	close(h.freed)
	return time.Now().Before(h.expires), nil
}

func (t *table) renew(lease string, ttl time.Duration) (bool, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	key, ok := t.byLease[lease]
	if !ok || time.Now().After(t.locks[key].expires) {
		return false, nil
	}
	t.locks[key].expires = time.Now().Add(ttl)
	return true, nil
}

func (t *table) abandon(string) {} // nothing renews by itself here

// tokenLock is lockbench's token lock, through rueidis.
type tokenLock struct {
	c      rueidis.Client
	mu     sync.Mutex
	leases map[string][2]string // lease -> key, token
	self   bool                 // renews by itself (TESTDRIVER_SELF_RENEW)
	stops  map[string]chan struct{}
}

var (
	unlock = rueidis.NewLuaScript(`if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`)
	renew  = rueidis.NewLuaScript(`if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end return 0`)
)

func newTokenLock() (*tokenLock, error) {
	db, _ := strconv.Atoi(os.Getenv("LOCKBENCH_REDIS_DB"))
	c, err := rueidis.NewClient(rueidis.ClientOption{
		InitAddress: []string{os.Getenv("LOCKBENCH_REDIS_ADDR")},
		Username:    os.Getenv("LOCKBENCH_REDIS_USERNAME"),
		Password:    os.Getenv("LOCKBENCH_REDIS_PASSWORD"),
		SelectDB:    db,
	})
	if err != nil {
		return nil, err
	}
	return &tokenLock{c: c, leases: map[string][2]string{}, stops: map[string]chan struct{}{},
		self: os.Getenv("TESTDRIVER_SELF_RENEW") == "1"}, nil
}

func (l *tokenLock) acquire(ctx context.Context, key string, ttl time.Duration) (string, uint64, error) {
	tok := newID()
	for {
		err := l.c.Do(ctx, l.c.B().Set().Key(key).Value(tok).Nx().PxMilliseconds(ttl.Milliseconds()).Build()).Error()
		if err == nil {
			l.mu.Lock()
			l.leases[tok] = [2]string{key, tok}
			if l.self {
				stop := make(chan struct{})
				l.stops[tok] = stop
				go l.renewLoop(tok, ttl, stop)
			}
			l.mu.Unlock()
			return tok, 0, nil
		}
		if !rueidis.IsRedisNil(err) {
			if ctx.Err() != nil {
				return "", 0, ctx.Err()
			}
			return "", 0, err
		}
		select {
		case <-ctx.Done():
			return "", 0, ctx.Err()
		case <-time.After(time.Millisecond):
		}
	}
}

func (l *tokenLock) take(lease string) ([2]string, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	kt, ok := l.leases[lease]
	delete(l.leases, lease)
	if stop, ok := l.stops[lease]; ok {
		close(stop)
		delete(l.stops, lease)
	}
	return kt, ok
}

// renewLoop extends lease every ttl/3 until stop, as a library's own extension does.
func (l *tokenLock) renewLoop(lease string, ttl time.Duration, stop chan struct{}) {
	t := time.NewTicker(ttl / 3)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		ok, err := l.renew(lease, ttl)
		select {
		case <-stop:
			return // released meanwhile: its renewal may have found it gone
		default:
		}
		if err != nil || !ok {
			send(reply{Type: "lost", Lease: lease})
			return
		}
		send(reply{Type: "extended", Lease: lease})
	}
}

func (l *tokenLock) release(lease string) (bool, error) {
	kt, ok := l.take(lease)
	if !ok {
		return false, nil
	}
	n, err := unlock.Exec(context.Background(), l.c, []string{kt[0]}, []string{kt[1]}).AsInt64()
	return n == 1, err
}

func (l *tokenLock) renew(lease string, ttl time.Duration) (bool, error) {
	l.mu.Lock()
	kt, ok := l.leases[lease]
	l.mu.Unlock()
	if !ok {
		return false, nil
	}
	n, err := renew.Exec(context.Background(), l.c, []string{kt[0]}, []string{kt[1], strconv.FormatInt(ttl.Milliseconds(), 10)}).AsInt64()
	return n == 1, err
}

func (l *tokenLock) abandon(lease string) { l.take(lease) }
