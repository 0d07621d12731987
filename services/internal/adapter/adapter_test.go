package adapter_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/lockbench/lockbench/internal/usage"
	"github.com/lockbench/lockbench/services"
	"github.com/lockbench/lockbench/services/internal/adapter"
	"github.com/lockbench/lockbench/services/internal/server"
	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/workload"
)

// client is a service's own connection, as far as the adapter sees it.
type client struct {
	via    func(string) string
	closed int
}

func (c *client) Scope(strategies.Info, string) workload.Scope { return nil }
func (c *client) Close()                                       { c.closed++ }

// What etcd, ZooKeeper and PostgreSQL said of themselves before they shared the adapter,
// for an external service and a spawned one: the notes, the child's flags, the members.
func TestConnTellsWhatTheServicesTold(t *testing.T) {
	t.Parallel()
	cl := &client{}
	c := &adapter.Conn{Client: cl, Title: "etcd", Flag: "etcd", Replaces: []string{"etcd", "etcd-members"},
		Addrs: []string{"127.0.0.1:1", "127.0.0.1:2"}, Via: &cl.via, Version: "3.5.1", CostUnit: "etcd requests = x", More: []string{"more"}}
	if got := c.Notes(); !slices.Equal(got, []string{"etcd: external 3.5.1 at 127.0.0.1:1,127.0.0.1:2; etcd requests = x", "more"}) {
		t.Errorf("external notes %q", got)
	}
	if f, r := c.Child(); f != nil || r != nil {
		t.Errorf("an external service's child flags %q replacing %q; want the user's own", f, r)
	}
	if addrs, servers := c.Members(); len(addrs) != 2 || servers != nil {
		t.Errorf("external members %v, servers %v; want the addresses, no processes", addrs, servers)
	}
	c.Processes, c.Version = []*server.Process{}, ""
	if got := c.Notes()[0]; got != "etcd: spawned at 127.0.0.1:1,127.0.0.1:2; etcd requests = x" {
		t.Errorf("spawned note %q", got)
	}
	if f, r := c.Child(); !slices.Equal(f, []string{"--etcd=127.0.0.1:1,127.0.0.1:2"}) || !slices.Equal(r, []string{"etcd", "etcd-members"}) {
		t.Errorf("a spawned service's child flags %q replacing %q", f, r)
	}
	c.Route(func(a string) string { return "proxy-of-" + a })
	var o strategies.Options
	c.Configure(&o)
	if cl.via == nil || cl.via("m") != "proxy-of-m" || o.Service != cl || c.Name() != "etcd" {
		t.Errorf("Route set via %v, Configure handed %v, Name %q; want the client's own", cl.via != nil, o.Service, c.Name())
	}
	c.Close()
	if cl.closed != 1 {
		t.Errorf("Close reached the client %d times", cl.closed)
	}
}

// Open spawns without an address and dials one within the connect timeout; each error
// names the flag, and a usage error stays one.
func TestOpenNamesTheFlag(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	need := services.Need{ConnectTimeout: time.Second}
	bad := errors.New("refused")
	spawn := func(context.Context) (int, error) { return 1, nil }
	dial := func(ctx context.Context, addr string) (int, error) {
		if _, ok := ctx.Deadline(); !ok {
			return 0, errors.New("no deadline")
		}
		switch addr {
		case "usage":
			return 0, usage.Errorf("bad address")
		case "down":
			return 0, bad
		}
		return 2, nil
	}
	if c, err := adapter.Open(ctx, need, "etcd", "", dial, spawn); c != 1 || err != nil {
		t.Errorf("no address: %d, %v; want spawned", c, err)
	}
	if c, err := adapter.Open(ctx, need, "etcd", "h:1", dial, spawn); c != 2 || err != nil {
		t.Errorf("an address: %d, %v; want dialled within the timeout", c, err)
	}
	if _, err := adapter.Open(ctx, need, "etcd", "usage", dial, spawn); !usage.Is(err) || !strings.HasPrefix(err.Error(), "--etcd: ") {
		t.Errorf("a bad address: %v; want a usage error naming --etcd", err)
	}
	if _, err := adapter.Open(ctx, need, "etcd", "down", dial, spawn); usage.Is(err) || !errors.Is(err, bad) || !strings.HasPrefix(err.Error(), "--etcd: ") {
		t.Errorf("a server down: %v; want its error, naming --etcd", err)
	}
	failing := func(context.Context) (int, error) { return 0, bad }
	if _, err := adapter.Open(ctx, need, "etcd", "", dial, failing); err == nil || err.Error() != "spawn etcd for the run (or give --etcd): refused" {
		t.Errorf("a failed spawn: %v", err)
	}
}

// The cost of a window is the difference of two readings; a count that went back is the
// service's own error (a server restarted).
func TestStartCostSubtractsReadings(t *testing.T) {
	t.Parallel()
	at := time.Unix(100, 0)
	readings := []adapter.Reading{{At: at, Requests: 10, CPU: time.Millisecond}, {At: at.Add(time.Second), Requests: 25, CPU: 3 * time.Millisecond}}
	read := func(context.Context) (adapter.Reading, error) {
		r := readings[0]
		readings = readings[1:]
		return r, nil
	}
	restarted := errors.New("restarted")
	stop, err := adapter.StartCost(context.Background(), read, func(before, after adapter.Reading) (workload.Cost, error) {
		return before.Spent(after, 2, restarted)
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := stop(context.Background())
	want := workload.Cost{Servers: 2, Requests: 15, CPUUS: 2000, Elapsed: time.Second}
	if err != nil || got != want {
		t.Errorf("cost %+v, %v; want %+v", got, err, want)
	}
	if _, err := (adapter.Reading{Requests: 5}).Spent(adapter.Reading{Requests: 4}, 1, restarted); !errors.Is(err, restarted) {
		t.Errorf("a count that went back: %v; want the service's error", err)
	}
}

// A service registered with its address flag alone (RegisterAddr, as ZooKeeper and
// PostgreSQL are): the flag bound with its help, Check judging its value, Open dialling
// it, or spawning without it, with the run's Need, then Adapt.
func TestRegisterAddr(t *testing.T) {
	t.Parallel()
	var dialled, spawned []string
	var adapted []services.Need
	adapter.RegisterAddr(services.Service{Name: "probe-addr", Title: "Probe", Order: 99}, "the probe's address",
		adapter.Addr[*client]{
			Check: func(addr string) error {
				if addr == "bad" {
					return usage.Errorf("invalid --probe-addr %s", addr)
				}
				return nil
			},
			Dial: func(_ context.Context, addr string) (*client, error) {
				dialled = append(dialled, addr)
				return &client{}, nil
			},
			Spawn: func(_ context.Context, need services.Need) (*client, error) {
				spawned = append(spawned, need.Phases[0].Strategy)
				return &client{}, nil
			},
			Adapt: func(c *client, need services.Need) *adapter.Conn {
				adapted = append(adapted, need)
				return &adapter.Conn{Client: c, Title: "Probe", Flag: "probe-addr"}
			},
		})
	open := func(args ...string) (services.Conn, error) {
		fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
		b := services.Bind(fs)
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fl := fs.Lookup("probe-addr"); fl == nil || fl.Usage != "the probe's address" {
			t.Fatalf("--probe-addr bound as %+v", fl)
		}
		if err := b.Flags("probe-addr").Check(); err != nil {
			return nil, err
		}
		need := services.Need{ConnectTimeout: time.Second, Phases: []workload.Phase{{Strategy: "zk-lock"}}}
		return b.Flags("probe-addr").Open(context.Background(), need)
	}
	if _, err := open("--probe-addr", "bad"); !usage.Is(err) {
		t.Errorf("--probe-addr bad: %v; want Check's usage error", err)
	}
	if c, err := open("--probe-addr", "h:1"); err != nil || c.Name() != "Probe" || !slices.Equal(dialled, []string{"h:1"}) || spawned != nil {
		t.Errorf("--probe-addr h:1: %v, %v; dialled %q, spawned %q; want h:1 dialled", c, err, dialled, spawned)
	}
	if c, err := open(); err != nil || c == nil || !slices.Equal(spawned, []string{"zk-lock"}) || len(dialled) != 1 {
		t.Errorf("no address: %v, %v; dialled %q, spawned for %q; want a spawn given the run's phases", c, err, dialled, spawned)
	}
	if len(adapted) != 2 || adapted[1].ConnectTimeout != time.Second {
		t.Errorf("Adapt saw %+v; want each Open's Need", adapted)
	}
}
