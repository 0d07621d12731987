package node

import (
	"github.com/lockbench/lockbench/internal/usage"
	"github.com/lockbench/lockbench/workload"
)

// Barrier is the barrier of a multi-machine run from --node (I/N, or auto: Auto) and
// --barrier (the name the processes share); nil for a run of one process, when neither is
// given. The two go together. node is --node as resolved (auto made I/N), which the report
// names. lookup reads the environment (os.LookupEnv).
func Barrier(spec, name string, lookup func(string) (string, bool)) (b *workload.Barrier, node string, err error) {
	if spec == "" && name == "" {
		return nil, spec, nil
	}
	if spec == "" || name == "" {
		return nil, spec, usage.Errorf("--node and --barrier go together: --node I/N --barrier NAME")
	}
	node, err = Auto(spec, lookup)
	if err != nil {
		return nil, spec, err
	}
	i, n, err := workload.ParseNode(node)
	if err != nil {
		return nil, node, err
	}
	return &workload.Barrier{Name: name, Node: i, Nodes: n}, node, nil
}
