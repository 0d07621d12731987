package strategies

import (
	"slices"
	"strings"

	"github.com/lockbench/lockbench/internal/usage"
)

// All is the list that names the lock core's strategies (Core) as one word.
const All = "all"

// List reads a list of strategies as --strategy and a profile's strategy key write it:
// names separated by commas ("a, b,,c" is a, b, c), or all, the lock core (Core), alone.
// The names are not looked up here: a run refuses an unknown one with its phase. A list
// with all beside other names is a usage error naming --strategy: all already means every
// one of the core, and the libraries and other services are listed by name.
func List(list string) ([]string, error) {
	var names []string
	for _, n := range strings.Split(list, ",") {
		if n = strings.TrimSpace(n); n != "" {
			names = append(names, n)
		}
	}
	switch {
	case len(names) == 1 && names[0] == All:
		return Core(), nil
	case len(names) > 1 && slices.Contains(names, All):
		return nil, usage.Errorf("invalid --strategy %q: 'all' runs the articles' Redis strategies (%s) and goes alone; to add libraries or other lock services, list every name", list, strings.Join(Core(), ","))
	}
	return names, nil
}
