package workload

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Barrier makes N lockbench processes — on any machines, sharing one lock service — run
// each phase together: every process waits at a counter in the Backend's shared store (its
// BarrierStore: a Redis key) until all N arrived, before the phase starts and again after it ends, so their
// measured windows line up and `report merge` gives the whole picture. The processes share
// the run's key prefix (derived from Name), so they contend for the very same locks; node 1
// alone cleans the keys up.
type Barrier struct {
	Name    string        // shared by the N processes, e.g. a job name; keys are lockbench:<Name>:...
	Node    int           // this process, 1..Nodes
	Nodes   int           // how many processes meet
	Timeout time.Duration // how long to wait for the others at each meeting. Default 5m.
}

// ParseNode reads "I/N" (e.g. "2/3"), 1-based.
func ParseNode(s string) (node, nodes int, err error) {
	a, b, ok := strings.Cut(s, "/")
	node, err1 := strconv.Atoi(a)
	nodes, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || nodes < 1 || node < 1 || node > nodes {
		return 0, 0, &ConfigError{Field: "node", Value: s, Reason: "want I/N with 1 <= I <= N, e.g. 2/3"}
	}
	return node, nodes, nil
}

func (b *Barrier) validate() error {
	if b == nil {
		return nil
	}
	if b.Name == "" || strings.ContainsAny(b.Name, "{}*?[] ") {
		return &ConfigError{Field: "barrier", Value: b.Name, Reason: "want a name shared by the processes (letters, digits, - _ . :)"}
	}
	if b.Nodes < 1 || b.Node < 1 || b.Node > b.Nodes {
		return &ConfigError{Field: "node", Value: fmt.Sprintf("%d/%d", b.Node, b.Nodes), Reason: "want I/N with 1 <= I <= N"}
	}
	if b.Timeout == 0 {
		b.Timeout = 5 * time.Minute
	}
	return nil
}

// prefix is the run's shared key prefix.
func (b *Barrier) prefix() string { return "lockbench:" + b.Name + ":" }

// meet waits until all Nodes processes reached meeting point (e.g. "3:start"). Each process
// increments the meeting's counter in the backend's shared store (its BarrierStore) once
// and polls it; the counter expires on its own.
func (b *Barrier) meet(ctx context.Context, backend Backend, point string) error {
	key := b.prefix() + "barrier:" + point
	store, ok := backend.(BarrierStore)
	if !ok {
		return fmt.Errorf("barrier %s: %w", key, ErrNoBarrier)
	}
	n, err := store.Arrive(ctx, key, b.Timeout+time.Minute)
	if err != nil {
		return fmt.Errorf("barrier %s: %w", key, err)
	}
	deadline := time.Now().Add(b.Timeout)
	for n < int64(b.Nodes) {
		if time.Now().After(deadline) {
			return fmt.Errorf("barrier %s: %d of %d processes arrived within %s", key, n, b.Nodes, b.Timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
		if n, err = store.Arrived(ctx, key); err != nil {
			return fmt.Errorf("barrier %s: %w", key, err)
		}
	}
	return nil
}
