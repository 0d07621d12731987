package live

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/redistest"
	"github.com/lockbench/lockbench/services/redis"
	"github.com/lockbench/lockbench/workload"
)

// writes counts the Write calls: a line must reach the file in one, so that a crash
// never leaves half of one.
type writes struct {
	n     int
	lines []string
}

func (w *writes) Write(p []byte) (int, error) {
	w.n++
	w.lines = append(w.lines, string(p))
	return len(p), nil
}

func TestLinesOneWritePerMeasuredSecond(t *testing.T) {
	var w writes
	l := NewLines(&w)
	l.Observe(workload.Progress{Phase: 1, Strategy: "token", Warmup: true})
	l.Observe(second("token", 1, "", 100, 200, 300))
	l.Observe(second("fenced", 2, "ttl=1s", 4000))
	if w.n != 2 {
		t.Fatalf("%d writes for two measured seconds and a warm-up, want 2: %q", w.n, w.lines)
	}
	var got Line
	if err := json.Unmarshal([]byte(w.lines[1]), &got); err != nil || !strings.HasSuffix(w.lines[1], "}\n") {
		t.Fatalf("line %q: %v", w.lines[1], err)
	}
	if got.Strategy != "fenced" || got.Phase != 2 || got.Label != "ttl=1s" || got.Acquires != 1 || got.P99US < 3990 ||
		got.Timeouts != 2 || got.Overlaps != 3 || got.AcquireRatePerS != 1 || got.TS != 1 {
		t.Errorf("line = %+v", got)
	}
	if l.Err() != nil {
		t.Errorf("Err = %v", l.Err())
	}
}

// A write error stops the stream and is kept for the end of the run.
func TestLinesKeepTheFirstWriteError(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "live.ndjson"))
	if err != nil {
		t.Fatal(err)
	}
	f.Close() // writes now fail, as on a full or vanished disk
	l := NewLines(f)
	l.Observe(second("token", 1, "", 100))
	l.Observe(second("token", 1, "", 100))
	if !errors.Is(l.Err(), os.ErrClosed) {
		t.Errorf("Err = %v, want the write error", l.Err())
	}
}

// SampleRedis counts what the server ran, without its own INFO readings.
func TestSampleRedisCountsCommands(t *testing.T) {
	redistest.Require(t)
	srv, c := redistest.Server(t)
	prefix := redistest.Prefix(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var total, readings atomic.Uint64
	done := make(chan struct{})
	go func() {
		defer close(done)
		nodes := func() []redis.Node { readings.Add(1); return redis.Nodes(c) } // a reading begins
		SampleRedis(ctx, nodes, 50*time.Millisecond, func(n uint64) { total.Add(n) })
	}()
	// readingsDone waits until k readings have ended: the (k+1)th has begun.
	readingsDone := func(k uint64, what string) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); readings.Load() < k+1; time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: %d readings in 10s", what, readings.Load())
			}
		}
	}
	readingsDone(2, "a first reading, to count from, and the one after it") // what ran before is counted
	before := total.Load()
	const n = 300
	for i := range n {
		if err := c.Do(ctx, c.B().Set().Key(prefix+"k").Value(strings.Repeat("x", i%7)).Build()).Error(); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for total.Load()-before < n && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	readingsDone(readings.Load()+1, "two more readings, with nothing else running")
	cancel()
	<-done
	if got := total.Load() - before; got != n {
		t.Errorf("SampleRedis counted %d commands on %s for %d SETs and its own INFOs, want exactly %d", got, srv.Addr, n, n)
	}
}
