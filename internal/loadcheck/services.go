package loadcheck

import (
	"strings"

	"github.com/lockbench/lockbench/internal/usage"
	"github.com/lockbench/lockbench/services"
	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/workload"
)

// ServiceFlags refuses a lock service's flags (--etcd, --etcd-members, --zookeeper, ...)
// given on the command line (given) in a run where no phase runs on that service: they would
// be silently ignored. The flags and the strategies come from the services and strategies
// registries; the home service (Redis) is reached by every run, and its flags always apply.
func ServiceFlags(b *services.Bound, phases []workload.Phase, given func(flag string) bool) error {
	used := map[string]bool{}
	for _, ph := range phases {
		if info, ok := strategies.Lookup(ph.Strategy); ok {
			used[info.Service] = true
		}
	}
	for _, name := range b.Names() {
		if name == b.Home() || used[name] {
			continue
		}
		for _, flag := range b.FlagNames(name) {
			if !given(flag) {
				continue // a profile's: it serves the profile's own phases
			}
			var users []string
			for _, s := range strategies.Names() {
				if info, ok := strategies.Lookup(s); ok && info.Service == name {
					users = append(users, s)
				}
			}
			title := name
			for _, s := range services.All() {
				if s.Name == name {
					title = s.Title
				}
			}
			return usage.Errorf("--%s is for the strategies that run on %s (%s), and no phase of this run does; drop it, or add one of them to --strategy", flag, title, strings.Join(users, ", "))
		}
	}
	return nil
}
