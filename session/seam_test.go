package session_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/lockbench/lockbench/faults"
	"github.com/lockbench/lockbench/services"
	"github.com/lockbench/lockbench/session"
	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/workload"
)

// barelock is a lock service with only what the registry requires: Bind, Check and Open,
// and a Conn that is a Backend (Name, Configure, Scope) with Close, whose Scope has
// StartCost and StuckLocks. No members, routing, notes, child flags, barrier, clock or
// cleanup: the session must ask for each and do without.
const bareService = "barelock"

var bare = &memTable{held: map[string]bool{}}

func init() {
	services.Register(services.Service{Name: bareService, Title: "BareLock", Order: 98, Bind: func(fs *pflag.FlagSet) services.Flags {
		return bareFlags{}
	}})
	strategies.Register(strategies.Info{Name: "bare-lock", Service: bareService, Summary: "a lock on the in-test service with the required interface only"},
		func(info strategies.Info, o strategies.Options) (strategies.Strategy, error) {
			t, ok := o.Service.(*memTable)
			if !ok {
				return nil, errors.New("bare-lock needs the barelock service")
			}
			return &memLock{info: info, t: t}, nil
		})
}

type bareFlags struct{}

func (bareFlags) Check() error { return nil }
func (bareFlags) Open(context.Context, services.Need) (services.Conn, error) {
	bare.opened.Add(1)
	return bareConn{}, nil
}

type bareConn struct{}

func (bareConn) Name() string                    { return "BareLock" }
func (bareConn) Configure(o *strategies.Options) { o.Service = bare }
func (bareConn) Close()                          { bare.closed.Add(1) }
func (bareConn) Scope(strategies.Info, string) workload.Scope {
	bare.scoped.Add(1)
	return bareScope{}
}

type bareScope struct{}

func (bareScope) StartCost(context.Context) (func(context.Context) (workload.Cost, error), error) {
	return func(context.Context) (workload.Cost, error) { return workload.Cost{}, errors.New("no counters") }, nil
}
func (bareScope) StuckLocks(context.Context, func(string) bool) (uint64, error) { return 0, nil }

// openPhase opens a session of one phase of strategy, with faults.
func openPhase(t *testing.T, strategy string, fault ...string) (*session.Session, workload.Config, error) {
	t.Helper()
	cfg := workload.Config{Strategies: []string{strategy},
		Base:     workload.Base{Load: workload.Load{Workers: 2, Keys: 1}, Lock: workload.Lock{TTL: strategies.TTLOf(time.Second)}},
		Duration: 300 * time.Millisecond, Warmup: -1, AcquireTimeout: time.Second, Faults: fault}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	plan, err := session.NewPlan(&cfg, cfg.Duration)
	if err != nil {
		t.Fatal(err)
	}
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	s, err := session.Open(context.Background(), session.Setup{Config: &cfg, Plan: plan, Services: services.Bind(fs)})
	return s, cfg, err
}

// A service with the required interface alone runs a phase, with no notes and no child
// flags; a node fault on it is refused when the session opens, naming what it lacks.
func TestRequiredInterfaceAlone(t *testing.T) {
	s, cfg, err := openPhase(t, "bare-lock")
	if err != nil {
		t.Fatal(err)
	}
	results, err := workload.Run(context.Background(), cfg, s.Backend(), s.Options(nil))
	notes := s.Notes()
	flags, replaced := s.ChildFlags()
	s.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 1 || results[0].Acquired == 0 || results[0].Safety.Overlaps != 0 {
		t.Fatalf("bare-lock: %+v; want acquisitions without overlaps", results)
	}
	if bare.scoped.Load() != 1 || bare.closed.Load() != 1 {
		t.Errorf("Scope %d and Close %d times; want once each", bare.scoped.Load(), bare.closed.Load())
	}
	if len(notes) != 0 || len(flags) != 0 || len(replaced) != 0 {
		t.Errorf("notes %q, child flags %q replacing %q; want none from a service without them", notes, flags, replaced)
	}
	for _, fault := range []string{"kill:node=0,at=100ms", "latency:node=0,ms=1"} {
		s, _, err := openPhase(t, "bare-lock", fault)
		var spec *faults.SpecError
		if !errors.As(err, &spec) || !strings.Contains(err.Error(), "barelock has no members a node fault can act on") {
			t.Errorf("%s on a service without members: %v; want a usage error saying it has none", fault, err)
		}
		s.Close()
	}
}
