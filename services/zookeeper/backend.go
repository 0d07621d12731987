package zookeeper

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/lockbench/lockbench/services/internal/adapter"
	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/workload"
)

// Scope is the phase's lock znodes on the whole ensemble: the cost, stuck locks and
// cleanup of a phase of zk-lock. (The barrier and the clock of a multi-process run stay on
// Redis.)
func (c *Conn) Scope(_ strategies.Info, prefix string) workload.Scope {
	return scope{c, strings.ReplaceAll(prefix, "/", "%2F")}
}

type scope struct {
	c     *Conn
	named string // the phase's prefix as its lock znodes' names start: each / as %2F
}

type reading struct {
	adapter.Reading // Requests: the packets received
	sent            uint64
	uptimeMS        []int64
	pids            []int // of the spawned servers: a restart by the kill fault changes them
}

// read sums `mntr` over the servers, and the CPU of the spawned ones from /proc (mntr has
// none).
func (s scope) read(ctx context.Context) (reading, error) {
	r := reading{Reading: adapter.Reading{At: time.Now()}}
	for i, addr := range s.c.Servers {
		out, err := fourLetter(ctx, addr, "mntr")
		if err != nil {
			return r, fmt.Errorf("mntr on %s: %w", addr, err)
		}
		m := parseMntr(out)
		r.Requests += uint64(m["zk_packets_received"])
		r.sent += uint64(m["zk_packets_sent"])
		r.uptimeMS = append(r.uptimeMS, m["zk_uptime"])
		if i < len(s.c.servers) {
			if c, err := s.c.servers[i].CPU(); err == nil {
				r.CPU += c
			}
			r.pids = append(r.pids, s.c.servers[i].Pid())
		}
	}
	return r, nil
}

// parseMntr reads mntr's "key<TAB>value" lines, the numeric ones.
func parseMntr(out string) map[string]int64 {
	m := map[string]int64{}
	for l := range strings.Lines(out) {
		k, v, ok := strings.Cut(strings.TrimSpace(l), "\t")
		if !ok {
			continue
		}
		if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
			m[k] = n
		}
	}
	return m
}

var errServersChanged = errors.New("a ZooKeeper server restarted during the phase")

// StartCost reads mntr as the window opens and again as it closes.
func (s scope) StartCost(ctx context.Context) (func(context.Context) (workload.Cost, error), error) {
	return adapter.StartCost(ctx, s.read, func(before, after reading) (workload.Cost, error) {
		// A server that restarted has been up for less than the window (a second of slack
		// for mntr's own timing), and a spawned one has a new pid.
		elapsedMS := after.At.Sub(before.At).Milliseconds()
		for i := range before.uptimeMS {
			if i >= len(after.uptimeMS) || after.uptimeMS[i] < before.uptimeMS[i]+elapsedMS-1000 {
				return workload.Cost{}, errServersChanged
			}
		}
		if !slices.Equal(before.pids, after.pids) {
			return workload.Cost{}, errServersChanged
		}
		return before.Spent(after.Reading, len(s.c.Servers), errServersChanged)
	})
}

// locks lists the phase's lock znodes (parent) under Root.
func (s scope) locks() ([]string, error) {
	children, _, err := s.c.Client.Children(Root)
	if errors.Is(err, zk.ErrNoNode) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, c := range children {
		if strings.HasPrefix(c, s.named) {
			out = append(out, c)
		}
	}
	return out, nil
}

// StuckLocks counts the phase's lock znodes that are not ephemeral: no session's end would
// ever delete them. The recipe makes none; the count is there to prove it.
func (s scope) StuckLocks(ctx context.Context, isLock func(string) bool) (uint64, error) {
	return within(ctx, func() (uint64, error) { return s.stuckLocks(ctx, isLock) })
}

// within runs f, a series of the client's requests, until ctx ends: go-zookeeper's
// requests take no context, and one queued while the client reconnects to a restarted
// server can wait far longer than the phase's end should. f then finishes in the
// background, its result dropped.
func within[T any](ctx context.Context, f func() (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := f()
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-ctx.Done():
		var zero T
		return zero, fmt.Errorf("ZooKeeper did not answer: %w", ctx.Err())
	}
}

func (s scope) stuckLocks(ctx context.Context, isLock func(string) bool) (uint64, error) {
	names, err := s.locks()
	if err != nil {
		return 0, err
	}
	var n uint64
	for _, name := range names {
		if ctx.Err() != nil {
			return n, ctx.Err()
		}
		key := strings.ReplaceAll(name, "%2F", "/")
		if !isLock(key) {
			continue
		}
		kids, _, err := s.c.Client.Children(Root + "/" + name)
		if err != nil {
			continue
		}
		for _, k := range kids {
			if ok, st, err := s.c.Client.Exists(Root + "/" + name + "/" + k); err == nil && ok && st.EphemeralOwner == 0 {
				n++
			}
		}
	}
	return n, nil
}

// Cleanup deletes the phase's lock znodes and whatever is left under them.
func (s scope) Cleanup(ctx context.Context) error {
	_, err := within(ctx, func() (struct{}, error) { return struct{}{}, s.cleanup(ctx) })
	return err
}

func (s scope) cleanup(ctx context.Context) error {
	names, err := s.locks()
	if err != nil {
		return err
	}
	var errs []error
	for _, name := range names {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		p := Root + "/" + name
		kids, _, _ := s.c.Client.Children(p)
		for _, k := range kids {
			if err := s.c.Client.Delete(p+"/"+k, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
				errs = append(errs, err)
			}
		}
		if err := s.c.Client.Delete(p, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
			errs = append(errs, fmt.Errorf("delete %s: %w", p, err))
		}
	}
	return errors.Join(errs...)
}
