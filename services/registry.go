// Package services is the registry of the lock services strategies run on: Redis
// (services/redis), etcd, ZooKeeper and PostgreSQL. Each is one package under services/ that
// registers itself in init, and the binary imports it, as go-ycsb's databases do. A service
// must declare its flags (Bind: Check and Open) and the Conn Open returns (a
// workload.Backend, and Close); its members for the node faults, its notes, how its
// strategies' connections go through the fault proxies, what a --procs child is told of it,
// its barrier, clock and cleanup are optional interfaces (HasMembers, HasRoute, HasNotes,
// HasChild; workload.BarrierStore, workload.Clock, workload.Cleaner), and so are what the
// node faults ask of the home service's Conn (faults.Described, faults.NodeClients,
// faults.Failoverable) and a replicated topology for a failover (HasReplication, on its
// Flags).
//
// One service is the home of every run: Redis. It serves the strategies that name no
// service, and keeps a multi-process run's barrier and reference clock; the session also
// asks of it the replica check (--wait-replicas), which only Redis has.
package services

import (
	"context"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/lockbench/lockbench/internal/usage"
	"github.com/lockbench/lockbench/workload"
)

// Service is one lock service as it registers itself.
type Service struct {
	// Name is the service as strategies name it in strategies.Info.Service ("etcd"), and
	// as its flag is called.
	Name string
	// Title is the service as prose names it ("ZooKeeper").
	Title string
	// Order places its flags in --help and its notes in a report: lower first; the home
	// service comes before all others.
	Order int
	// Home marks the home service (Redis): one registers it.
	Home bool
	// Bind binds the service's flags to one command's flag set and returns where their
	// values land.
	Bind func(fs *pflag.FlagSet) Flags
	// Secrets are the service's flags whose values may hold a secret: a password, or an
	// address that can carry one (a URL with user:password@). A --procs fleet hands them to
	// its children through the environment, never on a command line that ps shows.
	Secrets []string
}

// Flags are one command's values of a service's flags.
type Flags interface {
	// Check refuses a bad value before anything runs, with a usage error naming the flag.
	Check() error
	// Open reaches the service the flags name or, given no address, spawns a private one
	// on loopback, for a run whose phases need runs on it. Errors name the flag.
	Open(ctx context.Context, need Need) (Conn, error)
}

// Need is what a run asks of a service.
type Need struct {
	// Phases are the run's phases whose strategies run on the service.
	Phases []workload.Phase
	// OnLost is the run's --on-lost.
	OnLost workload.OnLost
	// ConnectTimeout bounds reaching a service the user named (--connect-timeout).
	ConnectTimeout time.Duration
	// Via, when the run's faults work through TCP proxies, is the proxy of a member. The
	// home service dials through it from its first connection on; the others are routed
	// once they are up (HasRoute).
	Via func(addr string) string
}

// Conn is a service reached (or spawned) for one run: the Backend the engine drives (its
// name, the clients it hands a phase's strategy, the Scope that measures a phase's cost
// and stuck locks), and Close. That, the Flags and Bind are all a service must implement.
// What only some services have, a Conn offers through an optional interface the session
// discovers by type assertion, as go-ycsb discovers a DB's BatchDB: HasMembers,
// HasRoute, HasNotes, HasChild here (HasReplication on the Flags); workload.BarrierStore,
// workload.Clock and workload.Cleaner on the Backend and its Scope; faults.Described,
// faults.NodeClients and faults.Failoverable for the node faults.
type Conn interface {
	workload.Backend
	// Close closes the connections and stops whatever was spawned.
	Close()
}

// HasMembers is a Conn whose members node faults can act on. Without it, a node fault
// on the service is refused.
type HasMembers interface {
	// Members are the service's members in the order a fault's node= counts them, with
	// their processes when lockbench spawned them (nil when external).
	Members() (addrs []string, servers []Server)
}

// HasRoute is a Conn whose strategies' connections can go through the fault proxies.
// Without it, the partition and latency faults are refused on the service.
type HasRoute interface {
	// Route sends the strategies' connections to each member through via(member); the
	// Backend's own connections (cost, cleanup) stay direct.
	Route(via func(addr string) string)
}

// HasReplication is a service's Flags that can spawn replicas reaching their master
// through a proxy, for a run with a failover (Redis's sentinel topology). Without it, the
// failover fault is refused on the service.
type HasReplication interface {
	// ReplicateVia makes Open spawn the replicated topology the failover happens in, its
	// replica reaching its initial master through via(master) (the failover fault's proxy).
	ReplicateVia(via func(master string) (string, error))
}

// HasNotes is a Conn with something to say in the report: where the service ran and what
// its CMD/ACQ column counts.
type HasNotes interface {
	Notes() []string
}

// HasChild is a Conn a child of a --procs fleet reaches by other flags than the user's
// (a service lockbench spawned). Without it, the children get the user's flags as given.
type HasChild interface {
	// Child are the flags that send a child to this same service, and the names of the
	// user's flags they replace.
	Child() (flags, replaced []string)
}

// Server is a spawned member a node fault can kill, restart and freeze (faults.Server),
// as HasMembers hands them out.
type Server interface {
	Kill()
	Restart(ctx context.Context) error
	Pause() error
	Resume() error
}

var (
	mu       sync.Mutex
	registry = map[string]Service{}
)

// Register adds a service; it panics on a duplicate name, as a programming error.
func Register(s Service) {
	mu.Lock()
	defer mu.Unlock()
	if s.Name == "" || s.Bind == nil {
		panic("services: Register needs a Name and a Bind")
	}
	if _, dup := registry[s.Name]; dup {
		panic("services: " + s.Name + " registered twice")
	}
	for _, o := range registry {
		if s.Home && o.Home {
			panic("services: " + s.Name + " and " + o.Name + " both registered as the home service")
		}
	}
	registry[s.Name] = s
}

// All are the registered services in their Order.
func All() []Service {
	mu.Lock()
	defer mu.Unlock()
	out := make([]Service, 0, len(registry))
	for _, s := range registry {
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b Service) int {
		if a.Home != b.Home {
			if a.Home {
				return -1
			}
			return 1
		}
		if a.Order != b.Order {
			return a.Order - b.Order
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out
}

// SecretFlags are the flags every registered service declares secret (Service.Secrets).
func SecretFlags() []string {
	var out []string
	for _, s := range All() {
		out = append(out, s.Secrets...)
	}
	return out
}

// Titles are the registered services' Titles in their Order.
func Titles() []string {
	var out []string
	for _, s := range All() {
		out = append(out, s.Title)
	}
	return out
}

// Bound are every registered service's flags of one command, by service name.
type Bound struct {
	names     []string // in Order
	home      string
	flags     map[string]Flags
	flagNames map[string][]string // the flags each service bound, by service name
}

// Bind binds every registered service's flags to fs.
func Bind(fs *pflag.FlagSet) *Bound {
	b := &Bound{flags: map[string]Flags{}, flagNames: map[string][]string{}}
	for _, s := range All() {
		before := map[string]bool{}
		fs.VisitAll(func(f *pflag.Flag) { before[f.Name] = true })
		b.names = append(b.names, s.Name)
		b.flags[s.Name] = s.Bind(fs)
		fs.VisitAll(func(f *pflag.Flag) {
			if !before[f.Name] {
				b.flagNames[s.Name] = append(b.flagNames[s.Name], f.Name)
			}
		})
		if s.Home {
			b.home = s.Name
		}
	}
	return b
}

// Check checks every service's flags, in Order.
func (b *Bound) Check() error {
	for _, n := range b.names {
		if err := b.flags[n].Check(); err != nil {
			return err
		}
	}
	return nil
}

// Names are the bound services in Order.
func (b *Bound) Names() []string { return b.names }

// Flags are the flags of the service named name; nil when no such service is registered.
func (b *Bound) Flags(name string) Flags { return b.flags[name] }

// FlagNames are the names of the flags the service named name bound.
func (b *Bound) FlagNames(name string) []string { return b.flagNames[name] }

// Home is the name of the home service; "" when none is registered.
func (b *Bound) Home() string { return b.home }

// CheckList refuses what a comma-separated list flag must not hold: an empty element
// (a,,b), a name twice, and, with hostPorts, a host:port whose port is not one.
func CheckList(flag, raw string, hostPorts bool) error {
	if raw == "" {
		return nil
	}
	seen := map[string]bool{}
	for _, part := range strings.Split(raw, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			return usage.Errorf("invalid --%s %q: an empty element; give a comma-separated list without gaps", flag, raw)
		}
		if seen[part] {
			return usage.Errorf("invalid --%s %q: %s is listed twice", flag, raw, part)
		}
		seen[part] = true
		if !hostPorts || strings.Contains(part, "://") {
			continue
		}
		if _, port, err := net.SplitHostPort(part); err == nil {
			if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
				return usage.Errorf("invalid --%s %q: port %s is not a port (1 to 65535)", flag, raw, port)
			}
		}
	}
	return nil
}
