package fleet

import (
	"context"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/proc"
	"github.com/lockbench/lockbench/internal/redistest"
	"github.com/lockbench/lockbench/internal/testbin"
	"github.com/lockbench/lockbench/workload"
)

// A fleet's children are lockbench processes (the test binary is not lockbench): the tests
// that start them take the binary, built without the race detector, from the build cache
// (testbin.Lockbench), where package main's tests take it too.

var buildOnce = sync.OnceValues(testbin.Lockbench)

func binary(t *testing.T) string {
	t.Helper()
	bin, err := buildOnce()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// fleetOn is a fleet of procs children running one token phase of workers on the Redis at
// addr for d, its reports sent to progress.
func fleetOn(t *testing.T, addr string, procs, workers int, d string, progress func(workload.Progress)) *Fleet {
	given := []Flag{{"strategy", []string{"token"}}, {"workers", []string{strconv.Itoa(workers)}}, {"keys", []string{"8"}},
		{"duration", []string{d}}, {"warmup", []string{"0s"}}, {"redis", []string{addr}}, {"connect-timeout", []string{"5s"}}}
	spec := Spec{Command: "run", Given: given, Segments: []Segment{{0, 1, procs}}, Phases: 1, Binary: binary(t)}
	return &Fleet{spec: spec, env: os.Environ(), progress: progress}
}

// The children run their shares of the workers at the barrier and the parent merges their
// results: one phase of every worker, checked across the processes, whose acquires are
// the ones the fleet's progress reported.
func TestRunMergesTheChildren(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, 1)[0]
	var mu sync.Mutex
	var acquired uint64
	fl := fleetOn(t, srv.Addr, 2, 4, "1s", func(pr workload.Progress) {
		mu.Lock()
		defer mu.Unlock()
		acquired += pr.Second.Acquired
	})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	sum, err := fl.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Results) != 1 || fl.Interrupted() {
		t.Fatalf("%d results, interrupted %v; want one, whole", len(sum.Results), fl.Interrupted())
	}
	r := sum.Results[0]
	if cp := r.Safety.CrossProcess; cp == nil || cp.Processes != 2 || r.Workers != 4 {
		t.Errorf("cross-process check %+v over %d workers; want 2 processes, 4 workers", cp, r.Workers)
	}
	mu.Lock()
	defer mu.Unlock()
	if r.Acquired == 0 || acquired != r.Acquired {
		t.Errorf("progress summed %d acquires, the merged result %d; want the same, above 0", acquired, r.Acquired)
	}
}

// An interruption reaches every child, each writes its partial result, and the fleet says
// it was cut short.
func TestRunInterruptedKeepsThePartialResults(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, 1)[0]
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var once sync.Once
	fl := fleetOn(t, srv.Addr, 2, 2, "10m", func(pr workload.Progress) {
		if !pr.Warmup {
			once.Do(cancel) // the first second of the fleet: both children run
		}
	})
	sum, err := fl.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !fl.Interrupted() || len(sum.Results) != 1 || sum.Results[0].Acquired == 0 {
		t.Fatalf("interrupted %v, results %+v; want the partial result of the phase", fl.Interrupted(), sum.Results)
	}
}

// A child that fails is the run's error, with what it said; the others are stopped.
func TestRunChildErrorIsTheRunsError(t *testing.T) {
	t.Parallel()
	redistest.Require(t)
	port, err := proc.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	addr := "127.0.0.1:" + strconv.Itoa(port) // nothing listens there
	fl := fleetOn(t, addr, 2, 2, "1s", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	_, err = fl.Run(ctx)
	if err == nil || !strings.Contains(err.Error(), "of the --procs fleet failed") || !strings.Contains(err.Error(), addr) {
		t.Errorf("error %v; want the failed process and its error naming %s", err, addr)
	}
}
