// Package node resolves --node auto: which process of a multi-process run this one is,
// from the environment a Kubernetes Indexed Job gives its pods.
package node

import (
	"strconv"
	"strings"

	"github.com/lockbench/lockbench/internal/usage"
)

// Environment variables --node auto reads.
const (
	// JobIndexEnv is set by Kubernetes in every pod of an Indexed Job: the pod's 0-based
	// completion index.
	JobIndexEnv = "JOB_COMPLETION_INDEX"
	// NodesEnv gives the node count to a bare --node auto.
	NodesEnv = "LOCKBENCH_NODES"
)

// Auto resolves --node auto/N (or auto, with N in $LOCKBENCH_NODES) to I/N, I being
// $JOB_COMPLETION_INDEX + 1: each pod of an Indexed Job knows which node it is without a
// shell to do the arithmetic, so the image needs none. Any other value is returned as it
// is, for workload.ParseNode to check.
func Auto(spec string, lookup func(string) (string, bool)) (string, error) {
	rest, ok := strings.CutPrefix(spec, "auto")
	if !ok || (rest != "" && !strings.HasPrefix(rest, "/")) {
		return spec, nil
	}
	count, fromFlag := strings.CutPrefix(rest, "/")
	if !fromFlag {
		count, _ = lookup(NodesEnv)
		if count == "" {
			return "", usage.Errorf("invalid --node auto: the node count is missing; give --node auto/N (N = the Job's completions) or set $%s", NodesEnv)
		}
	}
	n, err := strconv.Atoi(count)
	if err != nil || n < 1 {
		where := "--node " + spec
		if !fromFlag {
			where = "$" + NodesEnv + "=" + count
		}
		return "", usage.Errorf("invalid %s: the node count must be a whole number >= 1, e.g. --node auto/3", where)
	}
	raw, set := lookup(JobIndexEnv)
	if !set || raw == "" {
		return "", usage.Errorf("invalid --node %s: $%s is not set; auto takes this process's index from it, as Kubernetes sets it in the pods of an Indexed Job (completionMode: Indexed); elsewhere give --node I/N", spec, JobIndexEnv)
	}
	i, err := strconv.Atoi(raw)
	if err != nil || i < 0 {
		return "", usage.Errorf("invalid --node %s: $%s is %q, want a 0-based index", spec, JobIndexEnv, raw)
	}
	if i >= n {
		return "", usage.Errorf("invalid --node %s: $%s=%d makes this node %d of %d; N must be the Job's completions", spec, JobIndexEnv, i, i+1, n)
	}
	return strconv.Itoa(i+1) + "/" + strconv.Itoa(n), nil
}
