// Package adapter is, once, what the lock services other than the home one (etcd,
// ZooKeeper, PostgreSQL) hand the registry: the services.Conn over a service's own
// connection, with the optional parts they all have (members for the node faults, the
// proxy routing, the notes, a --procs child's flags), and Open, which dials the address a
// flag gives or spawns a private server without one. A service fills a Conn with what it
// knows of itself; its own code keeps only its client, its spawn and its Scope.
package adapter

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/lockbench/lockbench/internal/proc"
	"github.com/lockbench/lockbench/internal/usage"
	"github.com/lockbench/lockbench/services"
	"github.com/lockbench/lockbench/services/internal/server"
	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/workload"
)

// Client is a service's own connection: what a strategy of the service is handed
// (Options.Service), the Scope of a phase on it, and its Close.
type Client interface {
	Scope(info strategies.Info, prefix string) workload.Scope
	Close()
}

// Conn is a service reached for a run, as the registry and the engine see it.
type Conn struct {
	Client
	// Title is the service as notes and errors call it ("ZooKeeper").
	Title string
	// Flag is the service's address flag ("zookeeper"): a --procs child of a spawned
	// service gets --Flag=Addrs; Replaces are the user's flags that stand for.
	Flag     string
	Replaces []string
	// Addrs are the members in the order a node fault's node= counts them.
	Addrs []string
	// Processes are the members lockbench spawned; nil when the service is external.
	Processes []*server.Process
	// Via is the Client's address rewrite, which Route sets: its strategies then dial the
	// fault proxies.
	Via *func(addr string) string
	// Version is the server's version ("" when unread); CostUnit says what the CMD/ACQ
	// column counts; More are further notes.
	Version, CostUnit string
	More              []string
}

var (
	_ services.Conn       = (*Conn)(nil)
	_ services.HasMembers = (*Conn)(nil)
	_ services.HasRoute   = (*Conn)(nil)
	_ services.HasNotes   = (*Conn)(nil)
	_ services.HasChild   = (*Conn)(nil)
)

// Name is Title.
func (c *Conn) Name() string { return c.Title }

// Configure hands the strategy the service's connection.
func (c *Conn) Configure(o *strategies.Options) { o.Service = c.Client }

// Members are Addrs, with the processes when lockbench spawned them.
func (c *Conn) Members() ([]string, []services.Server) {
	if c.Processes == nil {
		return c.Addrs, nil
	}
	out := make([]services.Server, len(c.Processes))
	for i, p := range c.Processes {
		out[i] = p
	}
	return c.Addrs, out
}

// Route sends the strategies' connections through via.
func (c *Conn) Route(via func(string) string) { *c.Via = via }

// Notes are "etcd: spawned 3.5.1 at 127.0.0.1:2379; <cost unit>", then More.
func (c *Conn) Notes() []string {
	how, version := "external", ""
	if c.Processes != nil {
		how = "spawned"
	}
	if c.Version != "" {
		version = " " + c.Version
	}
	where := fmt.Sprintf("%s: %s%s at %s; %s", c.Title, how, version, strings.Join(c.Addrs, ","), c.CostUnit)
	return append([]string{where}, c.More...)
}

// Child sends a child to the members lockbench spawned; an external service the child
// reaches by the user's own flags, credentials included, as given.
func (c *Conn) Child() (flags, replaced []string) {
	if c.Processes == nil {
		return nil, nil
	}
	return []string{"--" + c.Flag + "=" + strings.Join(c.Addrs, ",")}, c.Replaces
}

// Open dials addr, the value of --flag, within need.ConnectTimeout, or spawns a private
// server when addr is empty. Its error names the flag, and keeps a usage error one.
func Open[C any](ctx context.Context, need services.Need, flag, addr string, dial func(context.Context, string) (C, error), spawn func(context.Context) (C, error)) (C, error) {
	if addr == "" {
		c, err := spawn(ctx)
		if err != nil {
			err = fmt.Errorf("spawn %s for the run (or give --%s): %w", flag, flag, err)
		}
		return c, err
	}
	dctx, cancel := context.WithTimeout(ctx, need.ConnectTimeout)
	defer cancel()
	c, err := dial(dctx, addr)
	switch {
	case err == nil:
	case usage.Is(err):
		err = &usage.Error{Err: fmt.Errorf("--%s: %w", flag, err)}
	default:
		err = fmt.Errorf("--%s: %w", flag, err)
	}
	return c, err
}

// Register registers s with the address flag of a service other than the home one:
// --<s.Name>, whose help is help, declared secret (a URL can carry a password, so a
// --procs child gets it through the environment), its spawned servers' temporary
// directories named after it too. bind binds the service's other flags and returns its
// Flags over addr, the flag's value.
func Register(s services.Service, help string, bind func(fs *pflag.FlagSet, addr *string) services.Flags) {
	proc.RegisterTempNames(s.Name)
	s.Secrets = []string{s.Name}
	s.Bind = func(fs *pflag.FlagSet) services.Flags {
		addr := new(string)
		fs.StringVar(addr, s.Name, "", help)
		return bind(fs, addr)
	}
	services.Register(s)
}

// Addr is a service whose one flag is its address (--Name): what RegisterAddr needs of it.
type Addr[C any] struct {
	// Check judges the address before anything runs; nil takes any (the dial judges it).
	Check func(addr string) error
	// Dial reaches the service at the address given, within the connect timeout; Spawn
	// starts a private one for the run without it.
	Dial  func(ctx context.Context, addr string) (C, error)
	Spawn func(ctx context.Context, need services.Need) (C, error)
	// Adapt is the connection as the registry hands it out.
	Adapt func(c C, need services.Need) *Conn
}

// RegisterAddr registers s with its address flag alone (Register), its Flags the Addr's
// check and its Open the Addr's dial, or spawn without an address, then Adapt.
func RegisterAddr[C any](s services.Service, help string, a Addr[C]) {
	Register(s, help, func(_ *pflag.FlagSet, addr *string) services.Flags { return &addrFlags[C]{s.Name, addr, a} })
}

// addrFlags are the Flags of a service registered with RegisterAddr.
type addrFlags[C any] struct {
	flag string
	addr *string
	a    Addr[C]
}

func (f *addrFlags[C]) Check() error {
	if f.a.Check == nil {
		return nil
	}
	return f.a.Check(*f.addr)
}

func (f *addrFlags[C]) Open(ctx context.Context, need services.Need) (services.Conn, error) {
	c, err := Open(ctx, need, f.flag, *f.addr, f.a.Dial, func(ctx context.Context) (C, error) { return f.a.Spawn(ctx, need) })
	if err != nil {
		return nil, err
	}
	return f.a.Adapt(c, need), nil
}
