package fleet

import (
	"runtime"
	"slices"
	"strconv"
	"testing"

	"github.com/lockbench/lockbench/workload"
)

func TestChildShareSplitsTheRemainderOverTheFirst(t *testing.T) {
	var got []int
	total := 0
	for node := 1; node <= 3; node++ {
		cfg := workload.Config{Base: workload.Base{Load: workload.Load{Workers: 100, MaxInflight: 100, Rate: 300}}, Phases: []workload.Phase{{Base: workload.Base{Load: workload.Load{Workers: 100, MaxInflight: 100, Rate: 300}}}}}
		ChildShare(&cfg, node, 3)
		got = append(got, cfg.Phases[0].Workers)
		total += cfg.Workers
		if cfg.Phases[0].Rate != 100 || cfg.Phases[0].MaxInflight != cfg.Phases[0].Workers {
			t.Errorf("node %d: rate %v, max-inflight %d; want 100 and its workers", node, cfg.Phases[0].Rate, cfg.Phases[0].MaxInflight)
		}
	}
	if !slices.Equal(got, []int{34, 33, 33}) || total != 100 {
		t.Errorf("100 workers over 3 processes: %v (total %d), want [34 33 33]", got, total)
	}
}

// Each child gets its share of the machine's cores, at least two (one on a machine of one
// core: a Go process with one P stalls whole with its one thread), unless the user chose
// GOMAXPROCS; the parent's environment is passed on untouched otherwise.
func TestChildEnvSharesTheCores(t *testing.T) {
	t.Setenv("GOMAXPROCS", "")
	env := []string{"A=1"}
	got := ChildEnv(env, 4*runtime.NumCPU())
	floor := "GOMAXPROCS=" + strconv.Itoa(min(2, runtime.NumCPU()))
	if !slices.Equal(got, []string{"A=1", floor}) || len(env) != 1 {
		t.Errorf("many children: %v (parent's %v), want A=1 and %s appended to a copy", got, env, floor)
	}
	if got := ChildEnv(env, 1); !slices.Contains(got, "GOMAXPROCS="+strconv.Itoa(runtime.NumCPU())) {
		t.Errorf("one child: %v, want every core", got)
	}
	t.Setenv("GOMAXPROCS", "3")
	if got := ChildEnv(env, 4); !slices.Equal(got, env) {
		t.Errorf("with GOMAXPROCS set by the user: %v, want the environment as it is", got)
	}
}
