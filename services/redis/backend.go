package redis

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/rueidis"

	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/workload"
)

// Backend is the Redis server(s) a run drives strategies against, as the engine sees them
// (workload.Backend). The clients belong to the caller.
type Backend struct {
	// Client reaches the Redis that the single-node strategies lock on. The barrier's
	// counters and the multi-process clock are on it too.
	Client rueidis.Client
	// Nodes are independent masters for redlock; without them redlock is refused.
	Nodes []rueidis.Client
	// Connect and NodeConnect are how Client and Nodes were made (Conn's
	// ClientOption and NodeOptions), for the library adapters that dial on their own.
	Connect     rueidis.ClientOption
	NodeConnect []rueidis.ClientOption

	runs *runs // the run's registry entry (see runs.go); nil for a Backend built by hand
}

// Redis keeps a multi-process run's barrier and its reference clock, and deletes a phase's
// keys: the optional parts of a Backend and its Scope.
var (
	_ workload.Backend      = Backend{}
	_ workload.BarrierStore = Backend{}
	_ workload.Clock        = Backend{}
	_ workload.Cleaner      = redisScope{}
)

// Name is "Redis".
func (t Backend) Name() string { return "Redis" }

// Configure hands the strategy the clients: Client, and Nodes for redlock.
func (t Backend) Configure(o *strategies.Options) {
	o.Client, o.Nodes, o.Connect, o.NodeConnect = t.Client, t.Nodes, t.Connect, t.NodeConnect
}

// Scope measures and cleans a multi-node strategy's phase on every server behind Nodes,
// any other on every server behind Client (a cluster's every node).
func (t Backend) Scope(info strategies.Info, prefix string) workload.Scope {
	t.runs.add(prefix) // before the phase writes a key: a run killed now leaves nothing unknown
	s := redisScope{prefix: prefix, nodes: Nodes(t.Client), runs: t.runs}
	if info.MultiNode {
		s.nodes = Nodes(t.Nodes...)
	}
	// The cost reads' dedicated connections (ReadStats) are dialled now, before the workers
	// start: dialled at the window's edge, beside a million busy workers, one timed out.
	for _, n := range s.nodes {
		_ = n.Client.Dedicated(func(rueidis.DedicatedClient) error { return nil })
	}
	return s
}

// Arrive is INCR key and EXPIRE key, in whole seconds, in one round trip.
func (t Backend) Arrive(ctx context.Context, key string, ttl time.Duration) (int64, error) {
	c := t.Client
	cmds := c.DoMulti(ctx,
		c.B().Incr().Key(key).Build(),
		c.B().Expire().Key(key).Seconds(int64(ttl.Seconds())).Build())
	return cmds[0].AsInt64()
}

// Arrived is GET key.
func (t Backend) Arrived(ctx context.Context, key string) (int64, error) {
	return t.Client.Do(ctx, t.Client.B().Get().Key(key).Build()).AsInt64()
}

// ClockSamples reads Client's TIME on a dedicated connection, so that no pipelined command
// delays the round trip.
func (t Backend) ClockSamples(ctx context.Context, n int) ([]workload.ClockSample, error) {
	out := make([]workload.ClockSample, 0, n)
	err := t.Client.Dedicated(func(dc rueidis.DedicatedClient) error {
		for range n {
			sent := time.Now()
			v, err := dc.Do(ctx, dc.B().Time().Build()).AsStrSlice()
			got := time.Now()
			if err != nil {
				return err
			}
			if len(v) != 2 {
				return fmt.Errorf("TIME answered %q", v)
			}
			var sec, usec int64
			if _, err := fmt.Sscan(v[0], &sec); err != nil {
				return fmt.Errorf("TIME answered %q", v)
			}
			if _, err := fmt.Sscan(v[1], &usec); err != nil {
				return fmt.Errorf("TIME answered %q", v)
			}
			out = append(out, workload.ClockSample{Sent: sent, Got: got, RefUS: sec*1e6 + usec})
		}
		return nil
	})
	return out, err
}

// redisScope is a phase's servers, fixed when the phase is built, and its key prefix.
type redisScope struct {
	prefix string
	nodes  []Node
	runs   *runs
}

// errServersChanged is the cost note of a phase whose servers were restarted or replaced.
var errServersChanged = errors.New("the servers changed during the phase (a failover or restart)")

// StartCost snapshots INFO on every server at once, before and after. The cost counts the
// masters only (a replica re-runs what its master ran), without lockbench's own INFO calls.
func (s redisScope) StartCost(ctx context.Context) (func(context.Context) (workload.Cost, error), error) {
	before, err := Snapshot(ctx, s.nodes)
	if err != nil {
		return nil, err
	}
	beats := s.runs.commands()
	return func(ctx context.Context) (workload.Cost, error) {
		after, err := Snapshot(ctx, s.nodes)
		if err != nil {
			return workload.Cost{}, err
		}
		if !sameServers(before, after) {
			return workload.Cost{}, errServersChanged
		}
		var b, a []ServerStats
		var master rueidis.Client
		for i := range min(len(before), len(after)) {
			if before[i].Role == "master" {
				b, a = append(b, before[i]), append(a, after[i])
				master = s.nodes[i].Client
			}
		}
		c := CostBetween(b, a)
		// The run registry's heartbeats (runs.go) are lockbench's, not the lock's: HSET,
		// PEXPIRE and HDEL, data commands.
		own := min(c.Commands, s.runs.commands()-beats)
		c.Commands -= own
		cost := workload.Cost{Servers: len(b), Requests: c.Commands, CPUUS: c.CPUUS, NetInBytes: c.NetIn, NetOutBytes: c.NetOut, Elapsed: c.Elapsed}
		if c.Calls != nil && master != nil {
			// Without the split (a server that refuses COMMAND INFO to this user) the
			// rest of the cost stands.
			if sp, err := SplitCalls(ctx, master, c.Calls); err == nil {
				cost.Split = true
				cost.DataRequests, cost.ScriptCalls = sp.Data-min(sp.Data, own), sp.Scripts
			}
		}
		return cost, nil
	}, nil
}

// sameServers reports whether two snapshots are of the same server processes: INFO
// counters of a restarted or replaced server cannot be subtracted.
func sameServers(a, b []ServerStats) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Addr != b[i].Addr || a[i].RunID != b[i].RunID {
			return false
		}
	}
	return true
}

// StuckLocks SCANs every server for the phase's keys and counts the lock keys whose PTTL
// is -1: present, and no ttl will ever remove them.
func (s redisScope) StuckLocks(ctx context.Context, isLock func(string) bool) (uint64, error) {
	var n uint64
	var errs []error
	for _, node := range s.nodes {
		errs = append(errs, scanPrefix(ctx, node.Client, s.prefix, func(keys []string) {
			for _, k := range keys {
				if !isLock(k) {
					continue
				}
				if ttl, err := node.Client.Do(ctx, node.Client.B().Pttl().Key(k).Build()).AsInt64(); err == nil && ttl == -1 {
					n++
				}
			}
		}))
	}
	return n, errors.Join(errs...)
}

// Cleanup SCANs every server for the phase's keys and UNLINKs them one by one: in a
// cluster the keys live in many slots.
func (s redisScope) Cleanup(ctx context.Context) error {
	var errs []error
	for _, node := range s.nodes {
		errs = append(errs, scanPrefix(ctx, node.Client, s.prefix, func(keys []string) {
			for _, k := range keys {
				node.Client.Do(ctx, node.Client.B().Unlink().Key(k).Build())
			}
		}))
	}
	err := errors.Join(errs...)
	if err == nil {
		s.runs.remove(ctx, s.prefix) // else the next run removes what is left
	}
	return err
}

// scanPrefix calls fn with batches of the keys of prefix on one server: those whose name
// holds it, at its start or further in, as a strategy's derived keys put a name of their
// own before the lock's (redisson-fair's redisson_lock_queue:PREFIX{0}, Redisson's
// prefixName). A prefix holds its run's random id: no other run's key holds it. SCAN
// walks the whole keyspace whatever its MATCH, so the leading * costs no more steps.
func scanPrefix(ctx context.Context, c rueidis.Client, prefix string, fn func([]string)) error {
	var cursor uint64
	for {
		e, err := c.Do(ctx, c.B().Scan().Cursor(cursor).Match("*"+globEscape(prefix)+"*").Count(1000).Build()).AsScanEntry()
		if err != nil {
			return err
		}
		if len(e.Elements) > 0 {
			fn(e.Elements)
		}
		if cursor = e.Cursor; cursor == 0 {
			return nil
		}
	}
}

// globEscape escapes what SCAN MATCH reads as a pattern (a strategy named lua:DIR may
// bring a * or a [ into the prefix).
func globEscape(s string) string {
	if !strings.ContainsAny(s, `*?[]\`) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[]\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Backend is the connection as the engine drives it.
func (c *Conn) Backend() Backend {
	return Backend{Client: c.Client, Nodes: c.Nodes, Connect: c.ClientOption, NodeConnect: c.NodeOptions, runs: c.runs}
}
