package etcd

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/lockbench/lockbench/services/internal/adapter"
	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/workload"
)

// Scope is the phase's keys on the whole cluster: the cost, stuck locks and cleanup of a
// phase of etcd-mutex. (The barrier and the clock of a multi-process run stay on Redis.)
func (c *Conn) Scope(_ strategies.Info, prefix string) workload.Scope {
	return scope{c: c, prefix: prefix}
}

type scope struct {
	c      *Conn
	prefix string
}

// reading is the members' counters at one moment.
type reading struct {
	adapter.Reading
	started []float64 // each member's process_start_time_seconds: a restart changes it
}

// read sums every member's metrics; the CPU of a spawned member comes from /proc (the
// metrics' process_cpu_seconds_total says the same at 10 ms resolution), of an external
// one from its metrics.
func (s scope) read(ctx context.Context) (reading, error) {
	r := reading{Reading: adapter.Reading{At: time.Now()}}
	for i, ep := range s.c.Endpoints {
		body, err := get(ctx, ep+"/metrics", s.c.tlsConfig())
		if err != nil {
			return r, fmt.Errorf("read %s/metrics: %w", ep, err)
		}
		m := parseMetrics(body)
		r.Requests += uint64(m.received)
		r.started = append(r.started, m.started)
		cpu := time.Duration(m.cpuSeconds * float64(time.Second))
		if i < len(s.c.servers) {
			if c, err := s.c.servers[i].CPU(); err == nil {
				cpu = c
			}
		}
		r.CPU += cpu
	}
	return r, nil
}

type metrics struct {
	received   float64 // grpc_server_msg_received_total, over every method
	cpuSeconds float64 // process_cpu_seconds_total
	started    float64 // process_start_time_seconds
}

// parseMetrics picks the counters lockbench needs from a Prometheus text exposition.
func parseMetrics(body string) metrics {
	var m metrics
	for line := range strings.Lines(body) {
		if strings.HasPrefix(line, "#") {
			continue
		}
		name, rest, _ := strings.Cut(line, " ")
		if i := strings.IndexByte(line, '}'); i >= 0 {
			name, rest = line[:i+1], line[i+1:]
		}
		v, err := strconv.ParseFloat(strings.Fields(rest + " x")[0], 64)
		if err != nil {
			continue
		}
		switch {
		case strings.HasPrefix(name, "grpc_server_msg_received_total{"):
			m.received += v
		case name == "process_cpu_seconds_total":
			m.cpuSeconds = v
		case name == "process_start_time_seconds":
			m.started = v
		}
	}
	return m
}

var errServersChanged = errors.New("an etcd member restarted during the phase")

// StartCost reads the metrics as the window opens and again as it closes.
func (s scope) StartCost(ctx context.Context) (func(context.Context) (workload.Cost, error), error) {
	return adapter.StartCost(ctx, s.read, func(before, after reading) (workload.Cost, error) {
		for i := range before.started {
			if i >= len(after.started) || after.started[i] != before.started[i] {
				return workload.Cost{}, errServersChanged
			}
		}
		return before.Spent(after.Reading, len(s.c.Endpoints), errServersChanged)
	})
}

// lockName is the lock a key of etcd-mutex belongs to: the key without its "/<lease>".
func lockName(k string) string {
	if i := strings.LastIndexByte(k, '/'); i >= 0 {
		return k[:i]
	}
	return k
}

// StuckLocks counts the phase's lock keys attached to no lease: nothing would ever delete
// them. concurrency.Mutex makes none; the count is there to prove it.
func (s scope) StuckLocks(ctx context.Context, isLock func(string) bool) (uint64, error) {
	resp, err := s.c.Client.Get(ctx, s.prefix, clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		return 0, err
	}
	var n uint64
	for _, kv := range resp.Kvs {
		if kv.Lease == 0 && isLock(lockName(string(kv.Key))) {
			n++
		}
	}
	return n, nil
}

// Cleanup deletes every key of the phase.
func (s scope) Cleanup(ctx context.Context) error {
	_, err := s.c.Client.Delete(ctx, s.prefix, clientv3.WithPrefix())
	return err
}
