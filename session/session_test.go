package session_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/lockbench/lockbench/faults"
	"github.com/lockbench/lockbench/internal/redistest"
	"github.com/lockbench/lockbench/services"
	"github.com/lockbench/lockbench/session"
	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/workload"
)

// memlock is a small lock service of this test's own: a table of keys in this process,
// registered through services.Register like etcd, with one strategy (mem-lock) on it. A
// phase on it must reach it through the registry alone: its flag, its Open, its Backend,
// its notes and its Close.
const memService = "memlock"

type memTable struct {
	mu      sync.Mutex
	held    map[string]bool
	opened  atomic.Int64
	closed  atomic.Int64
	phases  []string // the phases Open was asked for
	name    string   // --memlock's value
	scoped  atomic.Int64
	cleaned atomic.Int64
}

var table = &memTable{held: map[string]bool{}}

func init() {
	services.Register(services.Service{Name: memService, Title: "MemLock", Order: 99, Bind: func(fs *pflag.FlagSet) services.Flags {
		f := &memFlags{}
		fs.StringVar(&f.name, "memlock", "", "the in-test lock service")
		return f
	}})
	strategies.Register(strategies.Info{Name: "mem-lock", Service: memService, Summary: "a lock on the in-test service"},
		func(info strategies.Info, o strategies.Options) (strategies.Strategy, error) {
			t, ok := o.Service.(*memTable)
			if !ok {
				return nil, errors.New("mem-lock needs the memlock service")
			}
			return &memLock{info: info, t: t}, nil
		})
}

type memFlags struct{ name string }

func (f *memFlags) Check() error {
	if f.name == "bad" {
		return errors.New("invalid --memlock bad")
	}
	return nil
}

func (f *memFlags) Open(_ context.Context, need services.Need) (services.Conn, error) {
	table.opened.Add(1)
	table.name = f.name
	table.phases = nil
	for _, ph := range need.Phases {
		table.phases = append(table.phases, ph.Strategy)
	}
	return memConn{table}, nil
}

// memConn is the in-test service reached: the required services.Conn (a Backend and
// Close), with members for the node faults and notes (services.HasMembers, HasNotes); no
// proxy routing and no --procs child flags. The barrier and the clock stay on Redis.
type memConn struct{ t *memTable }

func (c memConn) Members() ([]string, []services.Server) { return []string{"in-process"}, nil }
func (c memConn) Notes() []string                        { return []string{"memlock: in this process"} }
func (c memConn) Close()                                 { c.t.closed.Add(1) }
func (c memConn) Name() string                           { return "MemLock" }
func (c memConn) Configure(o *strategies.Options)        { o.Service = c.t }
func (c memConn) Scope(strategies.Info, string) workload.Scope {
	c.t.scoped.Add(1)
	return memScope{c.t}
}

type memScope struct{ t *memTable }

func (s memScope) StartCost(context.Context) (func(context.Context) (workload.Cost, error), error) {
	return func(context.Context) (workload.Cost, error) {
		return workload.Cost{}, errors.New("an in-process table has no counters")
	}, nil
}
func (s memScope) StuckLocks(context.Context, func(string) bool) (uint64, error) { return 0, nil }
func (s memScope) Cleanup(context.Context) error {
	s.t.cleaned.Add(1)
	s.t.mu.Lock()
	defer s.t.mu.Unlock()
	clear(s.t.held)
	return nil
}

type memLock struct {
	info strategies.Info
	t    *memTable
}

func (l *memLock) Info() strategies.Info   { return l.info }
func (l *memLock) Stats() strategies.Stats { return strategies.Stats{} }
func (l *memLock) Close() error            { return nil }

func (l *memLock) Acquire(ctx context.Context, key, _ string) (strategies.Lease, error) {
	for {
		l.t.mu.Lock()
		if !l.t.held[key] {
			l.t.held[key] = true
			l.t.mu.Unlock()
			return memLease{l.t, key}, nil
		}
		l.t.mu.Unlock()
		select {
		case <-ctx.Done():
			return nil, errors.Join(strategies.ErrNotAcquired, ctx.Err())
		case <-time.After(50 * time.Microsecond):
		}
	}
}

type memLease struct {
	t   *memTable
	key string
}

func (m memLease) Release(context.Context) error {
	m.t.mu.Lock()
	defer m.t.mu.Unlock()
	delete(m.t.held, m.key)
	return nil
}
func (m memLease) Fence() uint64         { return 0 }
func (m memLease) Lost() <-chan struct{} { return nil }
func (m memLease) ValidUntil() time.Time { return time.Time{} } // unknown: a ttl from the acquire

// A service registered through the registry alone gets its flag, is opened for the phases
// that run on it, serves them beside a Redis phase, leaves its notes, and is closed.
func TestRegisteredServiceRunsAPhase(t *testing.T) {
	srv, _ := redistest.Server(t)
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	bound := services.Bind(fs)
	if err := fs.Parse([]string{"--memlock=table-1", "--redis=" + srv.Addr}); err != nil {
		t.Fatalf("the registered services' flags: %v", err)
	}
	if err := bound.Check(); err != nil {
		t.Fatal(err)
	}
	cfg := workload.Config{Strategies: []string{"mem-lock", "token"}, Base: workload.Base{Load: workload.Load{Workers: 4, Keys: 2}, Lock: workload.Lock{TTL: strategies.TTLOf(5 * time.Second)}},
		Duration: 300 * time.Millisecond, Warmup: -1, AcquireTimeout: 5 * time.Second}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	plan, err := session.NewPlan(&cfg, cfg.Duration)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	s, err := session.Open(ctx, session.Setup{Config: &cfg, Plan: plan, Services: bound})
	if err != nil {
		t.Fatal(err)
	}
	if tg := s.Target(); tg.Mode != "external" || !slices.Equal(tg.Addrs, []string{srv.Addr}) {
		t.Errorf("Redis, reached through its registered flags: %s at %v; want external at %s", tg.Mode, tg.Addrs, srv.Addr)
	}
	if table.opened.Load() != 1 || table.name != "table-1" || !slices.Equal(table.phases, []string{"mem-lock"}) {
		t.Errorf("Open called %d times with --memlock %q for phases %v; want once, table-1, [mem-lock]", table.opened.Load(), table.name, table.phases)
	}
	results, err := workload.Run(ctx, cfg, s.Backend(), s.Options(nil))
	if err != nil {
		s.Close()
		t.Fatal(err)
	}
	notes := s.Notes()
	s.Close()
	if table.closed.Load() != 1 {
		t.Errorf("Close called %d times, want once", table.closed.Load())
	}
	if len(results) != 2 {
		t.Fatalf("%d results, want 2", len(results))
	}
	mem, tok := results[0], results[1]
	if mem.Strategy != "mem-lock" || mem.Acquired == 0 || mem.Safety.Overlaps != 0 {
		t.Errorf("mem-lock: %s acquired %d with %d overlaps; want acquisitions and none", mem.Strategy, mem.Acquired, mem.Safety.Overlaps)
	}
	if table.scoped.Load() != 1 || table.cleaned.Load() != 1 {
		t.Errorf("the service's Scope %d and Cleanup %d times; want once each (its one phase)", table.scoped.Load(), table.cleaned.Load())
	}
	if !slices.ContainsFunc(mem.Notes, func(n string) bool { return strings.HasPrefix(n, "MemLock cost not measured") }) {
		t.Errorf("mem-lock notes %q: want the service's cost note, by its Backend's name", mem.Notes)
	}
	if tok.Strategy != "token" || tok.Acquired == 0 || !tok.Redis.Measured {
		t.Errorf("token on Redis beside it: %s acquired %d, cost measured %v", tok.Strategy, tok.Acquired, tok.Redis.Measured)
	}
	if !slices.Equal(notes, []string{"memlock: in this process"}) {
		t.Errorf("notes %q, want the service's own", notes)
	}
}

// A fault that only Redis's sentinel can play is refused for a phase on another service
// before anything is opened, and a node fault's node= is checked against the service's
// members when the session opens.
func TestFaultsAreCheckedAgainstTheService(t *testing.T) {
	cfg := workload.Config{Strategies: []string{"mem-lock"}, Base: workload.Base{Load: workload.Load{Workers: 1, Keys: 1}, Lock: workload.Lock{TTL: strategies.TTLOf(time.Second)}},
		Duration: time.Second, Warmup: -1, AcquireTimeout: time.Second,
		Faults: []string{"failover:at=100ms"}}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	if _, err := session.NewPlan(&cfg, cfg.Duration); err == nil || !strings.Contains(err.Error(), "mem-lock runs on memlock") {
		t.Errorf("failover on the in-test service: %v", err)
	}
	s, _, err := openPhase(t, "mem-lock", "kill:node=1,at=100ms")
	var spec *faults.SpecError
	if !errors.As(err, &spec) || !strings.Contains(err.Error(), "memlock has 1 data node(s)") {
		s.Close()
		t.Errorf("kill of node 1 of a one-member service: %v", err)
	}
}
