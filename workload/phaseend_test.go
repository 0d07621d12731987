package workload

import (
	"context"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/redistest"
)

// The end of a phase lets the acquires in flight finish: it does not cut setnx-expire
// between its SETNX and its EXPIRE, the crash only a fault may make. Twenty short phases,
// each ending with workers mid-acquire on every key, leave no key stuck.
func TestPhaseEndDoesNotCutAnAcquireInHalf(t *testing.T) {
	_, c := redistest.Server(t)
	cfg := shortConfig()
	cfg.Workers, cfg.Keys, cfg.Duration = 20, 5, 150*time.Millisecond
	cfg.AcquireTimeout = time.Second
	if err := cfg.Wait.Set("spin:100us"); err != nil { // keep SETNXes in flight at every moment
		t.Fatal(err)
	}
	for range 20 {
		cfg.Phases = append(cfg.Phases, cfg.Phase("setnx-expire"))
	}
	results, err := Run(context.Background(), cfg, Redis{Client: c}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	stuck := 0
	for i, r := range results {
		if r.Acquired == 0 {
			t.Errorf("phase %d acquired nothing: %v", i+1, r.Notes)
		}
		if r.Safety.StuckKeys > 0 {
			stuck++
			t.Logf("phase %d: %d keys stuck, verdict %q", i+1, r.Safety.StuckKeys, r.Verdict)
		}
	}
	if stuck > 0 {
		t.Errorf("%d of %d phases without a fault left keys without a ttl", stuck, len(results))
	}
}
