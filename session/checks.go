package session

// Checks of a resolved configuration against the faults and the lock services, made before
// anything runs: a bad value found after a 90-second run is worse than an error at once.

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/lockbench/lockbench/faults"
	"github.com/lockbench/lockbench/internal/usage"
	"github.com/lockbench/lockbench/services/redis"
	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/workload"
)

// NewPlan parses the phases' faults, once, after the final phases are made, and checks
// them against the phases: window is how long a phase's measured window is.
func NewPlan(cfg *workload.Config, window time.Duration) (*faults.Plan, error) {
	phaseFaults := make([][]string, len(cfg.Phases))
	for i, ph := range cfg.Phases {
		phaseFaults[i] = ph.Faults
	}
	plan, err := faults.NewPlan(phaseFaults)
	if err != nil {
		return nil, err
	}
	if err := checkFaultTimes(plan, window); err != nil {
		return nil, err
	}
	if err := checkServiceFaults(plan, cfg.Phases); err != nil {
		return nil, err
	}
	if err := checkFaultStrategies(plan, cfg.Phases); err != nil {
		return nil, err
	}
	return plan, nil
}

// checkFaultTimes refuses a scheduled fault that would fire after the measured window: it
// would never happen, and the phase would pass for having survived it.
func checkFaultTimes(plan *faults.Plan, window time.Duration) error {
	var err error
	plan.Any(func(s faults.Spec) bool {
		if s.NeedsNodes() && s.At >= window {
			err = usage.Errorf("invalid --fault %q: at=%s falls outside the measured window of %s (times count from its start): it would never fire", s.Raw, s.At, window)
		}
		return err != nil
	})
	return err
}

// checkServiceFaults refuses, before anything is spawned, the sentinel failover in a phase
// whose strategy runs on another lock service than Redis: it has no sentinel. The other
// node faults act on that service's own members.
func checkServiceFaults(plan *faults.Plan, phases []workload.Phase) error {
	for i, ph := range phases {
		info, ok := strategies.Lookup(ph.Strategy)
		if !ok || info.Service == "" {
			continue
		}
		for _, s := range plan.Phase(i) {
			if s.Kind == faults.Failover {
				return usage.Errorf("invalid --fault %q for %s: failover is Redis sentinel's, and %s runs on %s; kill, redis-pause, partition and latency act on its servers",
					s.Raw, ph.Strategy, ph.Strategy, info.Service)
			}
		}
	}
	return nil
}

// checkFaultStrategies refuses a fault that cannot strike any phase of the run:
// crash-between kills a client between SETNX and EXPIRE, which only setnx-expire sends apart.
// Beside a setnx-expire phase it stays allowed on the others, as the contrast the pitfalls
// matrix draws (token sets its ttl with the lock: 0 clients killed).
func checkFaultStrategies(plan *faults.Plan, phases []workload.Phase) error {
	var raw, strategy string
	for i, ph := range phases {
		for _, s := range plan.Phase(i) {
			if s.Kind != faults.CrashBetween {
				continue
			}
			if ph.Strategy == "setnx-expire" {
				return nil
			}
			raw, strategy = s.Raw, ph.Strategy
		}
	}
	if raw != "" {
		return usage.Errorf("invalid --fault %q for %s: crash-between strikes between SETNX and EXPIRE, which only setnx-expire sends as two commands; the others set the ttl with the lock", raw, strategy)
	}
	return nil
}

// CheckReplicas refuses --wait-replicas N on a target whose masters have fewer than N
// replicas: every acquire would wait for confirmations that cannot come, and time out.
func (s *Session) CheckReplicas(ctx context.Context, cfg *workload.Config) error {
	conn := s.Redis
	if cfg.WaitReplicas == 0 || conn == nil || conn.Mode == NoRedis {
		return nil
	}
	have, err := replicas(ctx, conn)
	if err != nil {
		return fmt.Errorf("--wait-replicas: counting the target's replicas: %w", err)
	}
	if have < cfg.WaitReplicas {
		return usage.Errorf("invalid --wait-replicas %d: the target's master has %d replica(s) (%s %s); spawn --topology sentinel (1 replica) or point --redis at a master with replicas",
			cfg.WaitReplicas, have, conn.Mode, conn.Topology)
	}
	return nil
}

// replicas is the fewest connected replicas any master of the target has.
func replicas(ctx context.Context, conn *redis.Conn) (int, error) {
	if conn.Mode == "embedded" {
		return 0, nil
	}
	fewest := -1
	for _, n := range redis.Nodes(conn.Client) {
		info, err := n.Client.Do(ctx, n.Client.B().Info().Section("replication").Build()).ToString()
		if err != nil {
			return 0, err
		}
		count, _ := strconv.Atoi(redis.InfoField(info, "connected_slaves"))
		if redis.InfoField(info, "role") == "master" && (fewest < 0 || count < fewest) {
			fewest = count
		}
	}
	return max(fewest, 0), nil
}
