package strategies_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/internal/usage"
	"github.com/lockbench/lockbench/strategies"
)

// A list of strategies as --strategy writes it: names split at commas, blanks dropped;
// all, alone, is the lock core; all beside other names is refused naming --strategy.
func TestList(t *testing.T) {
	if got, err := strategies.List(" token,, fenced ,"); err != nil || !slices.Equal(got, []string{"token", "fenced"}) {
		t.Errorf(`" token,, fenced ,": %q, %v; want token, fenced`, got, err)
	}
	if got, err := strategies.List(" all "); err != nil || !slices.Equal(got, strategies.Core()) || len(got) == 0 {
		t.Errorf("all: %q, %v; want the core, %q", got, err, strategies.Core())
	}
	if got, err := strategies.List("all,redsync"); got != nil || !usage.Is(err) || !strings.HasPrefix(err.Error(), `invalid --strategy "all,redsync": 'all' runs`) {
		t.Errorf("all,redsync: %q, %v; want a usage error naming --strategy", got, err)
	}
}
