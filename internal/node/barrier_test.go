package node

import (
	"testing"

	"github.com/lockbench/lockbench/internal/usage"
	"github.com/lockbench/lockbench/workload"
)

// --node and --barrier make a run's barrier together, and only together; auto resolves
// before the node is parsed, and the resolved node is what the report names.
func TestBarrier(t *testing.T) {
	env := func(k string) (string, bool) {
		v, ok := map[string]string{JobIndexEnv: "1"}[k]
		return v, ok
	}
	for _, tc := range []struct {
		spec, name string
		want       *workload.Barrier // nil with wantErr false: no barrier
		wantNode   string
		wantErr    string // "" = no error
	}{
		{"", "", nil, "", ""},
		{"2/3", "job", &workload.Barrier{Name: "job", Node: 2, Nodes: 3}, "2/3", ""},
		{"auto/3", "job", &workload.Barrier{Name: "job", Node: 2, Nodes: 3}, "2/3", ""},
		{"2/3", "", nil, "", "--node and --barrier go together: --node I/N --barrier NAME"},
		{"", "job", nil, "", "--node and --barrier go together: --node I/N --barrier NAME"},
		{"4/3", "job", nil, "", `invalid --node "4/3": want I/N with 1 <= I <= N, e.g. 2/3`},
		{"auto/1", "job", nil, "", "invalid --node auto/1: $JOB_COMPLETION_INDEX=1 makes this node 2 of 1; N must be the Job's completions"},
	} {
		b, node, err := Barrier(tc.spec, tc.name, env)
		if tc.wantErr != "" {
			if err == nil || err.Error() != tc.wantErr || !usage.Is(err) {
				t.Errorf("Barrier(%q, %q) = %+v, %v; want the usage error %q", tc.spec, tc.name, b, err, tc.wantErr)
			}
			continue
		}
		switch {
		case err != nil:
			t.Errorf("Barrier(%q, %q): %v", tc.spec, tc.name, err)
		case (b == nil) != (tc.want == nil) || b != nil && *b != *tc.want:
			t.Errorf("Barrier(%q, %q) = %+v, want %+v", tc.spec, tc.name, b, tc.want)
		case node != tc.wantNode:
			t.Errorf("Barrier(%q, %q) names node %q, want %q", tc.spec, tc.name, node, tc.wantNode)
		}
	}
}
