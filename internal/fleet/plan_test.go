package fleet

import (
	"slices"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/internal/usage"
	"github.com/lockbench/lockbench/workload"
)

func phases(procs ...int) []workload.Phase {
	var out []workload.Phase
	for _, n := range procs {
		out = append(out, workload.Phase{Strategy: "token", Base: workload.Base{Load: workload.Load{Workers: 10, Procs: n}}})
	}
	return out
}

// Consecutive phases with the same number of processes make one segment; a run of one
// process throughout makes none.
func TestSegments(t *testing.T) {
	segs, err := Segments(phases(1, 2, 2, 1, 3), nil, Refuse{})
	want := []Segment{{0, 1, 1}, {1, 3, 2}, {3, 4, 1}, {4, 5, 3}}
	if err != nil || !slices.Equal(segs, want) {
		t.Errorf("segments %v, %v; want %v", segs, err, want)
	}
	if segs, err := Segments(phases(1, 1), nil, Refuse{}); segs != nil || err != nil {
		t.Errorf("one process throughout: %v, %v; want none", segs, err)
	}
	// What a fleet cannot go with is refused only when there is a fleet.
	if segs, err := Segments(phases(1), nil, Refuse{Node: true, Profiling: true}); segs != nil || err != nil {
		t.Errorf("no fleet: %v, %v", segs, err)
	}
}

func TestSegmentsRefuse(t *testing.T) {
	for _, tc := range []struct {
		phases  []workload.Phase
		refuse  Refuse
		mention string
	}{
		{phases(11), Refuse{}, "more processes than workers (--workers 10 in the token phase)"},
		{phases(2), Refuse{Node: true}, "--procs and --node"},
		{phases(2), Refuse{Profiling: true}, "--cpuprofile and --memprofile"},
	} {
		_, err := Segments(tc.phases, nil, tc.refuse)
		if err == nil || !usage.Is(err) || !strings.Contains(err.Error(), tc.mention) {
			t.Errorf("%+v: %v; want a usage error mentioning %q", tc.refuse, err, tc.mention)
		}
	}
}

func TestChildPhases(t *testing.T) {
	cfg := workload.Config{Phases: phases(1, 2, 3)}
	if err := ChildPhases(&cfg, "1:3"); err != nil || len(cfg.Phases) != 2 || cfg.Phases[0].Procs != 2 {
		t.Errorf("1:3: %v, %v", cfg.Phases, err)
	}
	for _, spec := range []string{"", "1", "2:1", "0:4", "-1:1", "a:b"} {
		cfg := workload.Config{Phases: phases(1, 2, 3)}
		if err := ChildPhases(&cfg, spec); err == nil || !usage.Is(err) {
			t.Errorf("%q: %v; want a usage error", spec, err)
		}
	}
}
