package node

import (
	"testing"

	"github.com/lockbench/lockbench/internal/usage"
)

func TestAutoNode(t *testing.T) {
	for _, tc := range []struct {
		spec string
		env  map[string]string
		want string // "" = an error
	}{
		{"2/3", nil, "2/3"},
		{"", nil, ""},
		{"auto/3", map[string]string{JobIndexEnv: "0"}, "1/3"},
		{"auto/3", map[string]string{JobIndexEnv: "2"}, "3/3"},
		{"auto", map[string]string{JobIndexEnv: "1", NodesEnv: "4"}, "2/4"},
		{"auto/3", map[string]string{JobIndexEnv: "3"}, ""},
		{"auto/3", nil, ""},
		{"auto/3", map[string]string{JobIndexEnv: "-1"}, ""},
		{"auto/x", map[string]string{JobIndexEnv: "0"}, ""},
		{"auto/0", map[string]string{JobIndexEnv: "0"}, ""},
		{"auto", map[string]string{JobIndexEnv: "0"}, ""},
	} {
		got, err := Auto(tc.spec, func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok })
		switch {
		case tc.want == "" && tc.spec != "" && err == nil:
			t.Errorf("Auto(%q, %v) = %q, want an error", tc.spec, tc.env, got)
		case tc.want != "" && (err != nil || got != tc.want):
			t.Errorf("Auto(%q, %v) = %q, %v; want %q", tc.spec, tc.env, got, err, tc.want)
		case err != nil && !usage.Is(err):
			t.Errorf("Auto(%q): %v is not a usage error", tc.spec, err)
		}
	}
}
