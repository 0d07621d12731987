package main

// The lock services other than Redis: connected to (--etcd, --zookeeper, --postgres) or
// spawned for the run's strategies that need them, and stopped with the run.

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/lockbench/lockbench/faults"
	"github.com/lockbench/lockbench/services/etcd"
	"github.com/lockbench/lockbench/services/postgres"
	"github.com/lockbench/lockbench/services/zookeeper"
	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/workload"
)

// services are the other lock services a run reaches; nil fields are not needed.
type services struct {
	etcd *etcd.Conn
	zk   *zookeeper.Conn
	pg   *postgres.Conn

	proxies *faults.Proxies // what the routed services' strategies connect through
	routed  map[string]bool // by service name
}

// openServices connects to (or spawns) each service a phase's strategy runs on. Anything
// opened before a failure is closed again.
func (s *serviceFlags) openServices(ctx context.Context, cfg *workload.Config, connectTimeout time.Duration) (*services, error) {
	if s.etcdMembers < 1 || s.etcdMembers > 7 {
		return nil, usageErrorf("invalid --etcd-members %d: valid 1 to 7 (3 or 5 for a quorum)", s.etcdMembers)
	}
	need := map[string]bool{}
	workers := 0
	for _, ph := range cfg.Phases {
		if info, ok := strategies.Lookup(ph.Strategy); ok && info.Service != "" {
			need[info.Service] = true
			if info.Service == postgres.Service {
				workers = max(workers, ph.Concurrency())
			}
		}
	}
	out := &services{}
	var err error
	// --connect-timeout bounds reaching a service the user named, as it bounds Redis.
	dial := func(d func(context.Context, string) error, addr string) error {
		dctx, cancel := context.WithTimeout(ctx, connectTimeout)
		defer cancel()
		return d(dctx, addr)
	}
	if need[etcd.Service] {
		if s.etcd != "" {
			err = dial(func(ctx context.Context, a string) (err error) { out.etcd, err = etcd.Dial(ctx, a); return err }, s.etcd)
		} else {
			out.etcd, err = etcd.Spawn(ctx, s.etcdMembers)
		}
		if err != nil {
			return nil, serviceError("etcd", s.etcd, err)
		}
	}
	if need[zookeeper.Service] {
		if s.zookeeper != "" {
			err = dial(func(ctx context.Context, a string) (err error) { out.zk, err = zookeeper.Dial(ctx, a); return err }, s.zookeeper)
		} else {
			out.zk, err = zookeeper.Spawn(ctx)
		}
		if err != nil {
			out.close()
			return nil, serviceError("zookeeper", s.zookeeper, err)
		}
		// A holder that checks its lease before writing (--on-lost abort) takes a lost
		// connection as a lost lock, as Curator tells its users to (SUSPENDED).
		out.zk.LostOnSuspended = cfg.OnLost == workload.OnLostAbort
	}
	if need[postgres.Service] {
		if s.postgres != "" {
			err = dial(func(ctx context.Context, a string) (err error) { out.pg, err = postgres.Dial(ctx, a); return err }, s.postgres)
		} else {
			out.pg, err = postgres.Spawn(ctx, workers)
		}
		if err != nil {
			out.close()
			return nil, serviceError("postgres", s.postgres, err)
		}
	}
	return out, nil
}

// serviceError names the flag of a service that could not be reached, and tells how to
// get past a server that is not installed.
func serviceError(flag, addr string, err error) error {
	if addr == "" {
		return fmt.Errorf("spawn %s for the run (or give --%s): %w", flag, flag, err)
	}
	var ue interface{ ExitCode() int }
	if errors.As(err, &ue) && ue.ExitCode() == exitUsage {
		return &usageError{fmt.Errorf("--%s: %w", flag, err)}
	}
	return fmt.Errorf("--%s: %w", flag, err)
}

// close closes every connection and stops every server lockbench spawned. Nil-safe.
func (s *services) close() {
	if s == nil {
		return
	}
	if s.etcd != nil {
		s.etcd.Close()
	}
	if s.zk != nil {
		s.zk.Close()
	}
	if s.pg != nil {
		s.pg.Close()
	}
}

// backend routes each phase to the service its strategy runs on; Redis serves the others,
// the barrier and the clock.
func (s *services) backend(redis workload.Backend) workload.Backend {
	if s == nil || (s.etcd == nil && s.zk == nil && s.pg == nil) {
		return redis
	}
	by := map[string]workload.Backend{}
	if s.etcd != nil {
		by[etcd.Service] = etcd.Backend{Conn: s.etcd}
	}
	if s.zk != nil {
		by[zookeeper.Service] = zookeeper.Backend{Conn: s.zk}
	}
	if s.pg != nil {
		by[postgres.Service] = postgres.Backend{Conn: s.pg}
	}
	return workload.Router{Default: redis, By: by}
}

// notes say where each service ran and what its CMD/ACQ column counts.
func (s *services) notes() []string {
	if s == nil {
		return nil
	}
	where := func(spawned bool, name, version string, addrs []string) string {
		how := "external"
		if spawned {
			how = "spawned"
		}
		v := ""
		if version != "" {
			v = " " + version
		}
		return fmt.Sprintf("%s: %s%s at %s", name, how, v, strings.Join(addrs, ","))
	}
	var out []string
	if c := s.etcd; c != nil {
		out = append(out, where(c.Spawned(), "etcd", c.Version, c.Addrs())+"; "+etcd.CostUnit)
		if strings.HasPrefix(c.Version, "3.4") {
			out = append(out, "etcd "+c.Version+" catches up a waiter's watch on its predecessor only every 100 ms: under contention etcd-mutex settles near 10 acquires/s per waiting worker with an acquire p50 near 100 ms while the server idles; that is etcd's watch catch-up, not the lock's cost")
		}
	}
	if c := s.zk; c != nil {
		out = append(out, where(c.Spawned(), "ZooKeeper", c.Version, c.Addrs())+"; "+zookeeper.CostUnit, c.LostNote())
	}
	if c := s.pg; c != nil {
		out = append(out, where(c.Spawned(), "PostgreSQL", c.Version, []string{c.Addr()})+"; "+c.CostUnit())
	}
	return out
}

// nodes are the members of service for the node faults (kill, redis-pause), with their
// processes when lockbench spawned them; nil when the run does not reach that service.
func (s *services) nodes(service string) *faults.Nodes {
	if s == nil {
		return nil
	}
	var proxies *faults.Proxies
	if s.routed[service] {
		proxies = s.proxies
	}
	addrs := s.addrs(service)
	switch {
	case service == etcd.Service && s.etcd != nil:
		return faults.ServiceNodes(service, addrs, asServers(s.etcd.Servers()), proxies)
	case service == zookeeper.Service && s.zk != nil:
		return faults.ServiceNodes(service, addrs, asServers(s.zk.Processes()), proxies)
	case service == postgres.Service && s.pg != nil:
		var ps []faults.Server
		if p := s.pg.Process(); p != nil {
			ps = []faults.Server{p}
		}
		return faults.ServiceNodes(service, addrs, ps, proxies)
	}
	return nil
}

// addrs are the host:port of service's members, in the order node= counts them.
func (s *services) addrs(service string) []string {
	switch {
	case service == etcd.Service && s.etcd != nil:
		return s.etcd.Addrs()
	case service == zookeeper.Service && s.zk != nil:
		return s.zk.Addrs()
	case service == postgres.Service && s.pg != nil:
		return []string{s.pg.Addr()}
	}
	return nil
}

// routedNames are the services whose strategies connect through the proxies, sorted.
func (s *services) routedNames() []string {
	if s == nil {
		return nil
	}
	return slices.Sorted(maps.Keys(s.routed))
}

// route sends the strategy traffic of each service that a phase's partition or latency
// fault acts on through proxies, which it starts now for every member, so that the fault
// finds them from the phase's first moment. The Backends' own connections (cost, cleanup)
// stay direct.
func (s *services) route(proxies *faults.Proxies, plan *faults.Plan, phases []workload.Phase) {
	if s == nil || proxies == nil {
		return
	}
	for i, ph := range phases {
		info, _ := strategies.Lookup(ph.Strategy)
		if info.Service == "" || s.routed[info.Service] || !slices.ContainsFunc(plan.Phase(i), faults.Spec.NeedsProxy) {
			continue
		}
		addrs := s.addrs(info.Service)
		via := viaProxies(proxies, addrs)
		switch {
		case info.Service == etcd.Service && s.etcd != nil:
			s.etcd.Via = via
		case info.Service == zookeeper.Service && s.zk != nil:
			s.zk.Via = via
		case info.Service == postgres.Service && s.pg != nil:
			s.pg.Via = via
		default:
			continue
		}
		for _, a := range addrs {
			proxies.Dial(a)
		}
		if s.routed == nil {
			s.routed = map[string]bool{}
		}
		s.proxies = proxies
		s.routed[info.Service] = true
	}
}

// asServers is ps as the faults see them; nil (an external service) stays nil.
func asServers[S faults.Server](ps []S) []faults.Server {
	if ps == nil {
		return nil
	}
	out := make([]faults.Server, len(ps))
	for i, p := range ps {
		out[i] = p
	}
	return out
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
