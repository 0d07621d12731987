// Package fleet runs a load command as a fleet of lockbench processes on this machine
// (--procs N), the shape users deploy (many processes, a few goroutines each), measured in
// one command.
//
// The parent resolves and checks everything first, spawns (or reaches) the target once,
// then starts N children of its own binary. Each child is a process of a multi-process run
// (--node I/N with a barrier of the parent's choosing): its own clients, connections and
// local state, exactly as a separate machine would have, its share of the workers, its
// phases lined up with the others' at the barrier. The children write JSON results, which
// the parent merges (report.Merge, the cross-process oracle included) into the one report
// the flags ask for. While they run, each child streams its once-a-second progress to the
// parent on its stdout (ProgressWriter); the parent sums them for the status line, --live
// and --metrics-addr.
//
// The package holds both sides: the parent's (Segments, Start, Fleet.Run: the supervisor,
// the children's command lines, the merge) and the child's (TakeSecrets, TakeShare,
// ProgressWriter).
package fleet

import (
	"strconv"
	"strings"

	"github.com/lockbench/lockbench/faults"
	"github.com/lockbench/lockbench/internal/usage"
	"github.com/lockbench/lockbench/workload"
)

// Segment is a run of consecutive phases with the same number of processes: one fleet of
// children runs it.
type Segment struct {
	From, To int // phases [From, To)
	Procs    int
}

// Refuse are what else a run does that a fleet cannot go with.
type Refuse struct {
	Node      bool // --node or --barrier: the run is one process of a multi-process run
	Profiling bool // --cpuprofile, --memprofile: they profile this process
}

// Segments checks each phase's procs against its workers, and the run against what a fleet
// cannot do, and splits the phases into segments. nil when every phase runs in this
// process alone.
func Segments(phases []workload.Phase, plan *faults.Plan, refuse Refuse) ([]Segment, error) {
	var segs []Segment
	fleet := false
	for i, ph := range phases {
		n := ph.Procs // checked >= 1 by Validate
		if n > 1 {
			fleet = true
		}
		if n > ph.Concurrency() {
			what := "--workers"
			if ph.Rate > 0 {
				what = "--max-inflight"
			}
			return nil, usage.Errorf("invalid --procs %d: more processes than workers (%s %d in the %s phase); each process needs at least one", n, what, ph.Concurrency(), ph.Strategy)
		}
		if k := len(segs); k > 0 && segs[k-1].Procs == n {
			segs[k-1].To = i + 1
			continue
		}
		segs = append(segs, Segment{From: i, To: i + 1, Procs: n})
	}
	if !fleet {
		return nil, nil
	}
	switch {
	case refuse.Node:
		return nil, usage.Errorf("--procs and --node do not go together: --procs starts the processes of a multi-process run itself (each one a --node); use --node I/N --barrier NAME to run processes on several machines")
	case refuse.Profiling:
		return nil, usage.Errorf("--cpuprofile and --memprofile profile this process, and with --procs the work runs in its children; profile one process without --procs")
	}
	if plan != nil && plan.Any(faults.Spec.NeedsNodes) {
		var kinds []string
		plan.Any(func(s faults.Spec) bool {
			if s.NeedsNodes() {
				kinds = append(kinds, s.Raw)
			}
			return false
		})
		return nil, usage.Errorf("--procs does not take node faults (%s): they act on the servers from one process's phase clock; the client faults (holder-pause, process-pause, release-pause, clock-skew, crash-between) play in every process", strings.Join(kinds, ", "))
	}
	return segs, nil
}

// TakeShare makes this child of a --procs fleet run its phases, those of --procs-phases
// FROM:TO ("" for all), with its share of the workers.
func TakeShare(cfg *workload.Config, phases string) error {
	if cfg.Barrier == nil {
		return usage.Errorf("--procs-child goes with --node I/N and --barrier (it is set by --procs)")
	}
	if phases != "" {
		if err := ChildPhases(cfg, phases); err != nil {
			return err
		}
	}
	ChildShare(cfg, cfg.Barrier.Node, cfg.Barrier.Nodes)
	return nil
}

// ChildShare gives process node of nodes its share of every phase's workers, in-flight
// bound and open-loop rate: W workers over N processes are W/N each, and the first W mod N
// processes take one more.
func ChildShare(cfg *workload.Config, node, nodes int) {
	share := func(total int) int {
		n := total / nodes
		if node <= total%nodes {
			n++
		}
		return n
	}
	cfg.Workers, cfg.MaxInflight, cfg.Rate = share(cfg.Workers), share(cfg.MaxInflight), cfg.Rate/float64(nodes)
	for i := range cfg.Phases {
		ph := &cfg.Phases[i]
		ph.Workers, ph.MaxInflight, ph.Rate = share(ph.Workers), share(ph.MaxInflight), ph.Rate/float64(nodes)
	}
}

// ChildPhases keeps the phases [FROM, TO) of --procs-phases.
func ChildPhases(cfg *workload.Config, spec string) error {
	a, b, ok := strings.Cut(spec, ":")
	from, err1 := strconv.Atoi(a)
	to, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || from < 0 || to <= from || to > len(cfg.Phases) {
		return usage.Errorf("invalid --procs-phases %q: want FROM:TO within the %d phases", spec, len(cfg.Phases))
	}
	cfg.Phases = cfg.Phases[from:to]
	return nil
}
