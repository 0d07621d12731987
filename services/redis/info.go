package redis

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/rueidis"
)

// ServerStats is what lockbench reads from one server's INFO: the counters whose deltas
// give a phase's cost.
type ServerStats struct {
	Addr     string
	Role     string // master | slave | sentinel
	Version  string
	RunID    string // run_id: changes when the process restarts
	Commands uint64 // total_commands_processed: commands run inside scripts count too
	CPUUS    uint64 // used_cpu_sys + used_cpu_user, in µs
	NetIn    uint64 // total_net_input_bytes
	NetOut   uint64 // total_net_output_bytes
	// Calls are INFO commandstats' calls per command, by its lowercase name ("set",
	// "client|setinfo"): a script's commands count there too, beside the script's call.
	Calls map[string]uint64
	At    time.Time

	replyBytes int // size of this INFO reply on the wire, counted by the next snapshot
}

// infoArgs is the INFO command lockbench sends; its size on the wire is infoRequestBytes.
var infoArgs = []string{"INFO", "server", "replication", "stats", "cpu", "commandstats"}

var infoRequestBytes = func() int {
	n := len("*"+strconv.Itoa(len(infoArgs))) + 2
	for _, a := range infoArgs {
		n += len("$"+strconv.Itoa(len(a))) + 2 + len(a) + 2
	}
	return n
}()

// ReadStats runs INFO on one server. A server whose INFO lacks the counters lockbench needs
// (redis_version, total_commands_processed, used_cpu_*, total_net_*_bytes; miniredis has
// none of them) is an error, never zero counters that would read as "no cost".
//
// INFO goes on a dedicated connection, not the pipelined one the workers share: there it
// would wait for a slot of the client's ring behind every worker's command (100,000
// workers kept the cost read at a window's edge waiting 3-10 s). Its handshake runs before
// the INFO, so the server counts it before the snapshot; the pool keeps the connection for
// the next read. A connection the pool kept may have been cut since (a proxy's partition, a
// restart): a read that fails on one, not for its context and not with Redis's own error,
// is tried once more on a new one.
func ReadStats(ctx context.Context, c rueidis.Client, addr string) (ServerStats, error) {
	var txt string
	err := dedicatedDo(ctx, c, func(dc rueidis.DedicatedClient) error {
		var err error
		txt, err = dc.Do(ctx, dc.B().Info().Section(infoArgs[1:]...).Build()).ToString()
		return err
	})
	if err != nil {
		return ServerStats{}, fmt.Errorf("INFO %s: %w", addr, err)
	}
	s := ServerStats{Addr: addr, At: time.Now(), replyBytes: respBulkBytes(len(txt))}
	var sys, user float64
	var seen int
	for k, v := range infoLines(txt) {
		if name, ok := strings.CutPrefix(k, "cmdstat_"); ok {
			if s.Calls == nil {
				s.Calls = map[string]uint64{}
			}
			s.Calls[name] = statCalls(v)
			continue
		}
		switch k {
		case "redis_version", "total_commands_processed", "total_net_input_bytes",
			"total_net_output_bytes", "used_cpu_sys", "used_cpu_user":
			seen++
		}
		switch k {
		case "redis_version":
			s.Version = v
		case "role":
			s.Role = v
		case "run_id":
			s.RunID = v
		case "total_commands_processed":
			s.Commands, _ = strconv.ParseUint(v, 10, 64)
		case "total_net_input_bytes":
			s.NetIn, _ = strconv.ParseUint(v, 10, 64)
		case "total_net_output_bytes":
			s.NetOut, _ = strconv.ParseUint(v, 10, 64)
		case "used_cpu_sys":
			sys, _ = strconv.ParseFloat(v, 64)
		case "used_cpu_user":
			user, _ = strconv.ParseFloat(v, 64)
		}
	}
	if seen < 6 {
		return ServerStats{}, fmt.Errorf("INFO %s: the reply lacks the version and counters a Redis server reports (not a Redis server?)", addr)
	}
	s.CPUUS = uint64((sys + user) * 1e6)
	return s, nil
}

// statCalls is the calls= field of an INFO commandstats value
// ("calls=12,usec=30,usec_per_call=2.50,rejected_calls=0,failed_calls=0").
func statCalls(v string) uint64 {
	for f := range strings.SplitSeq(v, ",") {
		if n, ok := strings.CutPrefix(f, "calls="); ok {
			c, _ := strconv.ParseUint(n, 10, 64)
			return c
		}
	}
	return 0
}

// respBulkBytes is the wire size of a bulk reply with n payload bytes (RESP3 sends INFO as
// a verbatim string "=len\r\ntxt:...\r\n"; RESP2 as "$len\r\n...\r\n", 4 bytes less).
func respBulkBytes(n int) int {
	return 1 + len(strconv.Itoa(n+4)) + 2 + 4 + n + 2
}

// Cost is the difference between two snapshots of the same servers, without the traffic of
// lockbench's own INFO calls.
type Cost struct {
	Commands uint64
	CPUUS    uint64
	NetIn    uint64
	NetOut   uint64
	Elapsed  time.Duration
	// Calls are the calls per command name (INFO commandstats), nil when a server gave none.
	Calls map[string]uint64
}

// CostBetween subtracts snapshot a from b, server by server (same order). Between two
// snapshots the servers also ran lockbench's first INFO: one command, whose reply is in b's
// output bytes; b's own request is in b's input bytes. Both are taken out again.
func CostBetween(a, b []ServerStats) Cost {
	var c Cost
	for i := range min(len(a), len(b)) {
		c.Commands += sub(b[i].Commands, a[i].Commands+1)
		if i == 0 && a[i].Calls != nil {
			c.Calls = map[string]uint64{}
		}
		if b[i].Calls == nil || a[i].Calls == nil {
			c.Calls = nil // a server without commandstats: no split of the whole
		}
		if c.Calls != nil {
			for name, n := range b[i].Calls {
				own := a[i].Calls[name]
				if name == "info" {
					own++ // a's INFO
				}
				if d := sub(n, own); d > 0 {
					c.Calls[name] += d
				}
			}
		}
		c.CPUUS += sub(b[i].CPUUS, a[i].CPUUS)
		c.NetIn += sub(b[i].NetIn, a[i].NetIn+uint64(infoRequestBytes))
		c.NetOut += sub(b[i].NetOut, a[i].NetOut+uint64(a[i].replyBytes))
		c.Elapsed = max(c.Elapsed, b[i].At.Sub(a[i].At))
	}
	return c
}

func sub(x, y uint64) uint64 {
	if x < y {
		return 0 // a server restarted (counters reset) or a rounding edge
	}
	return x - y
}

// Node is one server behind a client.
type Node struct {
	Addr   string
	Client rueidis.Client
}

// Nodes lists the servers behind clients (a cluster client's every node), each once, in
// address order.
func Nodes(clients ...rueidis.Client) []Node {
	seen := map[string]bool{}
	var out []Node
	for _, c := range clients {
		if c == nil {
			continue // a Backend without a client: no servers
		}
		for addr, nc := range c.Nodes() {
			if !seen[addr] {
				seen[addr] = true
				out = append(out, Node{Addr: addr, Client: nc})
			}
		}
	}
	slices.SortFunc(out, func(a, b Node) int { return strings.Compare(a.Addr, b.Addr) })
	return out
}

// Snapshot reads INFO from every node at once.
func Snapshot(ctx context.Context, nodes []Node) ([]ServerStats, error) {
	out := make([]ServerStats, len(nodes))
	errs := make([]error, len(nodes))
	var wg sync.WaitGroup
	for i, n := range nodes {
		wg.Go(func() { out[i], errs[i] = ReadStats(ctx, n.Client, n.Addr) })
	}
	wg.Wait()
	return out, errors.Join(errs...)
}

// InfoField returns the value of one "key:value" line of an INFO reply, "" when it has none.
func InfoField(txt, key string) string {
	for k, v := range infoLines(txt) {
		if k == key {
			return v
		}
	}
	return ""
}

// infoLines yields the "key:value" lines of an INFO reply — the one parser of INFO here.
// RESP3 sends the reply as a verbatim string, which rueidis returns with its "txt:" prefix.
func infoLines(txt string) iter.Seq2[string, string] {
	return func(yield func(string, string) bool) {
		for line := range strings.Lines(strings.TrimPrefix(txt, "txt:")) {
			k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
			if ok && !yield(k, v) {
				return
			}
		}
	}
}

// dedicatedDo runs do on one of c's dedicated connections, the cost reads' (ReadStats,
// SplitCalls): not behind the workers' commands on the pipelined one. A connection the pool
// kept may have been cut since (a proxy's partition, a restart): do failing on one, not for
// ctx and not with Redis's own error, is tried once more on a new one.
func dedicatedDo(ctx context.Context, c rueidis.Client, do func(rueidis.DedicatedClient) error) error {
	var err error
	for try := 0; try < 2; try++ {
		err = c.Dedicated(do)
		if _, redisErr := rueidis.IsRedisErr(err); err == nil || redisErr || ctx.Err() != nil {
			break
		}
	}
	return err
}
