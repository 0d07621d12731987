// Package session is what a load command (run, sweep, capacity) opens between its flags and
// the engine: every lock service its phases run on, each registered in package services
// (Redis, the home service, among them), with the fault plan checked against them, the proxies the faults work
// through, and the engine's collaborators. Each phase's strategy, service and fault nodes
// are resolved once, when the session opens. Package main keeps the commands and the flags.
package session

import (
	"context"
	"maps"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/lockbench/lockbench/faults"
	"github.com/lockbench/lockbench/internal/usage"
	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/services"
	"github.com/lockbench/lockbench/services/redis"
	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/workload"
)

// NoRedis is the target mode of a run that reached no Redis: every phase ran on another
// lock service.
const NoRedis = "none"

// Setup is what a session opens: the run's final phases and where its services are.
type Setup struct {
	// Config holds the run's final phases (after a sweep made them, or a --procs child
	// took its share).
	Config *workload.Config
	// Plan is the phases' faults, parsed and checked (NewPlan).
	Plan *faults.Plan
	// RedisWanted reaches Redis even when no phase's strategy locks on it: the user named
	// one (--redis, --sentinel, --topology), or a --procs fleet keeps its barrier on it.
	RedisWanted bool
	// Services are the command's flags of the lock services, Redis's among them.
	Services *services.Bound
}

// Session is the lock services a run reaches, with what the fault layer needs. Close it.
type Session struct {
	// Redis is the Redis target: Mode NoRedis when no phase needed it, nil when the session
	// holds only the other services (OpenServices).
	Redis *redis.Conn

	plan    *faults.Plan
	proxies *faults.Proxies
	nodes   *faults.Nodes // Redis's

	open   []string                 // the other services reached, in registration order
	conns  map[string]services.Conn // by name
	routed map[string]bool          // the services whose strategies go through the proxies
	// phases are each strategy's service and fault nodes, resolved once.
	phases map[string]resolved
}

// resolved is what a strategy of the run runs on.
type resolved struct {
	info  strategies.Info
	nodes *faults.Nodes
}

// Open reaches (or spawns, or embeds) the Redis target and every other service the phases
// run on, with proxies in front of the servers when a fault needs them, and checks each
// phase's faults against them now rather than when the phase starts.
func Open(ctx context.Context, su Setup) (*Session, error) {
	s := &Session{plan: su.Plan}
	if !needsRedis(su) {
		// Every phase runs on another lock service, and nothing else asks for Redis: spawn
		// none (the services keep their own cost and cleanup).
		s.Redis = &redis.Conn{Mode: NoRedis}
		s.nodes = faults.NewNodes(nil, nil)
		if su.Plan.NeedsProxy() {
			s.proxies = faults.NewProxies() // the services' latency and partition faults
		}
		return s, s.openServices(ctx, su)
	}
	failovers := su.Plan.Count(faults.Failover)
	if failovers > 1 {
		return nil, usage.Errorf("--fault failover: one failover per run (afterwards the initial master is no longer the master); got %d", failovers)
	}
	need := services.Need{Phases: su.Config.Phases, OnLost: su.Config.OnLost, ConnectTimeout: connectTimeout(su)}
	if su.Plan.NeedsProxy() || failovers > 0 {
		s.proxies = faults.NewProxies()
	}
	if su.Plan.NeedsProxy() {
		need.Via = s.proxies.Dial
	}
	flags := su.Services.Flags(su.Services.Home())
	if r, ok := flags.(services.HasReplication); ok && failovers > 0 {
		r.ReplicateVia(s.proxies.Replication)
	}
	home, err := flags.Open(ctx, need)
	if err != nil {
		if s.proxies != nil {
			s.proxies.Close()
		}
		return nil, err
	}
	s.Redis = home.(*redis.Home).Conn
	s.nodes = faults.NewNodes(home, s.proxies)
	return s, s.openServices(ctx, su)
}

// connectTimeout is --connect-timeout: it bounds reaching each service the user named.
func connectTimeout(su Setup) time.Duration {
	return redis.FlagsOf(su.Services).ConnectTimeout
}

// OpenServices reaches only the other lock services the phases run on: a --procs parent
// whose children reach the Redis the user named themselves. Its Redis is nil.
func OpenServices(ctx context.Context, su Setup) (*Session, error) {
	s := &Session{plan: su.Plan}
	if err := s.connect(ctx, su); err != nil {
		return nil, err
	}
	return s, nil
}

// openServices connects the other services, routes them through the proxies, resolves the
// phases and checks their faults; the session is closed on an error.
func (s *Session) openServices(ctx context.Context, su Setup) error {
	if err := s.connect(ctx, su); err != nil {
		s.Close()
		return err
	}
	s.route(su.Config.Phases)
	s.resolve(su.Config.Phases)
	for i, ph := range su.Config.Phases {
		if _, err := faults.New(s.plan.Phase(i), ph.Concurrency(), s.nodesFor(ph)); err != nil {
			s.Close()
			return err
		}
	}
	return nil
}

// needsRedis tells whether the run needs a Redis: a phase of a Redis strategy, the barrier
// and clock of a multi-process run, or a target the user named.
func needsRedis(su Setup) bool {
	if su.RedisWanted || su.Config.Barrier != nil {
		return true
	}
	for _, ph := range su.Config.Phases {
		if info, _ := strategies.Lookup(ph.Strategy); info.Service == "" {
			return true
		}
	}
	return false
}

// connect reaches each other service a phase's strategy runs on. Whatever was opened
// before a failure is closed again.
func (s *Session) connect(ctx context.Context, su Setup) error {
	need := map[string]*services.Need{}
	for _, ph := range su.Config.Phases {
		info, ok := strategies.Lookup(ph.Strategy)
		if !ok || info.Service == "" {
			continue
		}
		if need[info.Service] == nil {
			need[info.Service] = &services.Need{OnLost: su.Config.OnLost, ConnectTimeout: connectTimeout(su)}
		}
		need[info.Service].Phases = append(need[info.Service].Phases, ph)
	}
	s.conns = map[string]services.Conn{}
	for _, name := range su.Services.Names() {
		n := need[name]
		if n == nil {
			continue
		}
		c, err := su.Services.Flags(name).Open(ctx, *n)
		if err != nil {
			s.closeServices()
			return err
		}
		s.open = append(s.open, name)
		s.conns[name] = c
	}
	return nil
}

// route sends the strategy traffic of each service that a phase's partition or latency
// fault acts on through proxies, which it starts now for every member, so that the fault
// finds them from the phase's first moment. The Backends' own connections (cost, cleanup)
// stay direct.
func (s *Session) route(phases []workload.Phase) {
	if s.proxies == nil {
		return
	}
	for i, ph := range phases {
		info, _ := strategies.Lookup(ph.Strategy)
		c, routable := s.conns[info.Service].(services.HasRoute)
		if !routable || s.routed[info.Service] || !slices.ContainsFunc(s.plan.Phase(i), faults.Spec.NeedsProxy) {
			continue // a service without HasRoute stays direct: its partition and latency faults are refused
		}
		addrs, _ := members(c)
		c.Route(viaProxies(s.proxies, addrs))
		for _, a := range addrs {
			s.proxies.Dial(a)
		}
		if s.routed == nil {
			s.routed = map[string]bool{}
		}
		s.routed[info.Service] = true
	}
}

// resolve looks each phase's strategy up once: its service and the nodes its node faults
// act on.
func (s *Session) resolve(phases []workload.Phase) {
	s.phases = map[string]resolved{}
	for _, ph := range phases {
		if _, done := s.phases[ph.Strategy]; done {
			continue
		}
		info, _ := strategies.Lookup(ph.Strategy)
		r := resolved{info: info, nodes: s.nodes}
		if c := s.conns[info.Service]; c != nil {
			var proxies *faults.Proxies
			if s.routed[info.Service] {
				proxies = s.proxies
			}
			addrs, servers := members(c)
			var fs []faults.Server
			for _, srv := range servers {
				fs = append(fs, srv)
			}
			r.nodes = faults.ServiceNodes(info.Service, addrs, fs, proxies)
		}
		s.phases[ph.Strategy] = r
	}
}

// members are c's members for the node faults (services.HasMembers); none when it has no
// such part, and then a node fault on it is refused.
func members(c any) ([]string, []services.Server) {
	if m, ok := c.(services.HasMembers); ok {
		return m.Members()
	}
	return nil, nil
}

// nodesFor is what phase ph's node faults act on: the servers of the lock service its
// strategy runs on.
func (s *Session) nodesFor(ph workload.Phase) *faults.Nodes {
	if r, ok := s.phases[ph.Strategy]; ok {
		return r.nodes
	}
	return s.nodes
}

// Close closes every connection and stops every server the session spawned. Nil-safe.
func (s *Session) Close() {
	if s == nil {
		return
	}
	s.closeServices()
	if s.Redis != nil {
		s.Redis.Close()
	}
	if s.proxies != nil {
		s.proxies.Close()
	}
}

func (s *Session) closeServices() {
	for _, name := range s.open {
		s.conns[name].Close()
	}
	s.open = nil
}

// Backend is what the engine drives: each phase routed to the service its strategy runs
// on; Redis serves the others, the barrier and the clock.
func (s *Session) Backend() workload.Backend {
	var home workload.Backend
	if s.Redis != nil && s.Redis.Mode != NoRedis {
		home = s.Redis.Backend()
	}
	if len(s.open) == 0 {
		return home
	}
	by := map[string]workload.Backend{}
	for _, name := range s.open {
		by[name] = s.conns[name]
	}
	return workload.Router{Default: home, By: by}
}

// Options are the engine's collaborators for this session; progress receives its
// once-a-second report.
func (s *Session) Options(progress func(workload.Progress)) workload.Options {
	return workload.Options{
		Progress: progress,
		NoCost:   s.Redis != nil && s.Redis.Mode == "embedded",
		Faults: func(ph workload.Phase) (workload.Faults, error) {
			specs, err := s.plan.Specs(ph.Faults)
			if err != nil {
				return nil, err
			}
			return faults.New(specs, ph.Concurrency(), s.nodesFor(ph))
		},
	}
}

// Target is the report's target block: the Redis reached (empty when the session holds
// only the other services).
func (s *Session) Target() report.Target {
	c := s.Redis
	if c == nil {
		return report.Target{}
	}
	return report.Target{Mode: c.Mode, Topology: c.Topology, Addrs: c.Addrs, RedisVersion: c.RedisVersion, Note: c.Note}
}

// Notes say where each other service ran and what its CMD/ACQ column counts
// (services.HasNotes).
func (s *Session) Notes() []string {
	var out []string
	for _, name := range s.open {
		if n, ok := s.conns[name].(services.HasNotes); ok {
			out = append(out, n.Notes()...)
		}
	}
	return out
}

// ProxyNote says that the proxies of the latency and partition faults add a hop, and to
// which services; "" when the run has none.
func (s *Session) ProxyNote() string {
	if !s.plan.NeedsProxy() {
		return ""
	}
	to := append([]string{"Redis"}, slices.Sorted(maps.Keys(s.routed))...)
	names := to[0]
	if n := len(to); n > 1 {
		names = strings.Join(to[:n-1], ", ") + " and " + to[n-1]
	}
	return "traffic to " + names + " goes through in-process TCP proxies (for the latency/partition faults): latencies include that hop"
}

// ChildFlags are the flags that send a child of a --procs fleet to the other services this
// session reached (those with services.HasChild), and the user's flags they replace.
func (s *Session) ChildFlags() (flags, replaced []string) {
	for _, name := range s.open {
		if c, ok := s.conns[name].(services.HasChild); ok {
			f, r := c.Child()
			flags, replaced = append(flags, f...), append(replaced, r...)
		}
	}
	return flags, replaced
}

// viaProxies is the address rewrite of a service's strategy: the proxy of the member
// dialled. ZooKeeper's client and pgx resolve a member's host before they dial, so each
// address the host resolves to is mapped back to the member's own: the proxies (and the
// faults that look them up) know the members as addrs list them.
func viaProxies(proxies *faults.Proxies, addrs []string) func(string) string {
	alias := map[string]string{}
	for _, a := range addrs {
		host, port, err := net.SplitHostPort(a)
		if err != nil {
			continue
		}
		ips, _ := net.LookupHost(host)
		for _, ip := range ips {
			alias[net.JoinHostPort(ip, port)] = a
		}
	}
	return func(addr string) string {
		if a, ok := alias[addr]; ok {
			addr = a
		}
		return proxies.Dial(addr)
	}
}
