package redis

import "github.com/lockbench/lockbench/internal/usage"

// CheckShared refuses a run of nodes processes (--node node, nodes > 1) on a Redis that
// lockbench would spawn for this process alone: its partners, on other machines or in
// other processes, cannot reach a private server on this one's loopback, and would wait
// out the barrier for nothing. A Redis given with --redis or --sentinel is shared, and so
// is the one a live `lockbench target up` state file names: every process of this machine
// reaches it.
func (f *Flags) CheckShared(node string, nodes int) error {
	if nodes < 2 || f.External() {
		return nil
	}
	if st, _, err := Status(f.State); err == nil && !st.Stale {
		return nil
	}
	return usage.Errorf("invalid --node %s: the %d processes of a multi-process run meet at a barrier on one Redis, and without --redis lockbench would spawn a private one on this process's loopback that the others cannot reach; give --redis HOST:PORT (or start one for this machine's processes with 'lockbench target up')", node, nodes)
}
