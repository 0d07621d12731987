package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/lockbench/lockbench/faults"
	"github.com/lockbench/lockbench/profiles"
	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/target"
	"github.com/lockbench/lockbench/workload"
)

// Checks of what the user gave, made before anything runs: a bad value found after a
// 90-second run, or silently replaced by a default, is worse than an error at once.

// bound is one setting's valid range, as its flag is named.
type bound struct {
	name  string
	ok    func(*workload.Config) bool
	value func(*workload.Config) string
	want  string
}

func atLeastOne(v int) bool { return v >= 1 }

// bounds are the settings whose zero or negative value the flag types accept but the
// engine would replace by a default or choke on.
var bounds = []bound{
	{"workers", func(c *workload.Config) bool { return atLeastOne(c.Workers) }, func(c *workload.Config) string { return strconv.Itoa(c.Workers) }, "at least 1"},
	{"keys", func(c *workload.Config) bool { return atLeastOne(c.Keys) }, func(c *workload.Config) string { return strconv.Itoa(c.Keys) }, "at least 1"},
	{"duration", func(c *workload.Config) bool { return c.Duration > 0 }, func(c *workload.Config) string { return c.Duration.String() }, "a duration > 0, e.g. 10s"},
	{"acquire-timeout", func(c *workload.Config) bool { return c.AcquireTimeout > 0 }, func(c *workload.Config) string { return c.AcquireTimeout.String() }, "a duration > 0, e.g. 5s"},
	{"warmup", func(c *workload.Config) bool { return c.Warmup >= 0 }, func(c *workload.Config) string { return c.Warmup.String() }, "a duration >= 0 (0 = no warm-up)"},
	{"ttl", func(c *workload.Config) bool { return c.TTL > 0 }, func(c *workload.Config) string { return c.TTL.String() }, "a duration > 0, e.g. 10s"},
	{"rate", func(c *workload.Config) bool { return c.Rate >= 0 }, func(c *workload.Config) string { return fmt.Sprint(c.Rate) }, "acquisitions/s >= 0 (0 = closed loop)"},
	{"max-inflight", func(c *workload.Config) bool { return c.MaxInflight >= 0 }, func(c *workload.Config) string { return strconv.Itoa(c.MaxInflight) }, "at least 1 (default --workers)"},
	{"reentry", func(c *workload.Config) bool { return c.Reentry >= 0 }, func(c *workload.Config) string { return strconv.Itoa(c.Reentry) }, "0 or more"},
	{"wait-replicas", func(c *workload.Config) bool { return c.WaitReplicas >= 0 }, func(c *workload.Config) string { return strconv.Itoa(c.WaitReplicas) }, "0 or more"},
}

// checkSetting checks the setting named name (a flag name) of cfg; nil for settings
// without a bound.
func checkSetting(name string, cfg *workload.Config) error {
	for _, b := range bounds {
		if b.name == name && !b.ok(cfg) {
			return usageErrorf("invalid --%s %s: want %s", name, b.value(cfg), b.want)
		}
	}
	return nil
}

// checkCommandLine checks every bounded flag given on the command line.
func (f *loadFlags) checkCommandLine() error {
	for _, b := range bounds {
		if f.cmdline[b.name] {
			if err := checkSetting(b.name, &f.cfg); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkStrategies refuses "all" beside other names: it already means every one.
func checkStrategies(list string) error {
	names := profiles.SplitList(list)
	for _, n := range names {
		if n == "all" && len(names) > 1 {
			return usageErrorf("invalid --strategy %q: 'all' already runs every strategy; give 'all' alone or a list of names", list)
		}
	}
	return nil
}

// checkFaultTimes refuses a scheduled fault that would fire after the measured window: it
// would never happen, and the phase would pass for having survived it.
func checkFaultTimes(plan *faults.Plan, window time.Duration) error {
	var err error
	plan.Any(func(s faults.Spec) bool {
		if s.NeedsNodes() && s.At >= window {
			err = usageErrorf("invalid --fault %q: at=%s falls outside the measured window of %s (times count from its start): it would never fire", s.Raw, s.At, window)
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
				return usageErrorf("invalid --fault %q for %s: failover is Redis sentinel's, and %s runs on %s; kill, redis-pause, partition and latency act on its servers",
					s.Raw, ph.Strategy, ph.Strategy, info.Service)
			}
		}
	}
	return nil
}

// checkOutputPaths makes sure the report and its extra files can be written, by creating
// them now — before a long run is lost to a typo in a path. A file that did not exist is
// removed again; --hdr-dir is created.
func (f *loadFlags) checkOutputPaths() error {
	for _, p := range []struct{ flag, path string }{{"out", f.out}, {"plot", f.plot}} {
		if p.path == "" {
			continue
		}
		if err := probeFile(p.path); err != nil {
			return usageErrorf("--%s %s: cannot be written: %v", p.flag, p.path, unwrapPath(err))
		}
	}
	if f.hdrDir != "" {
		if err := os.MkdirAll(f.hdrDir, 0o755); err != nil {
			return usageErrorf("--hdr-dir %s: cannot be created: %v", f.hdrDir, unwrapPath(err))
		}
		if err := probeFile(filepath.Join(f.hdrDir, ".lockbench-probe")); err != nil {
			return usageErrorf("--hdr-dir %s: cannot be written: %v", f.hdrDir, unwrapPath(err))
		}
	}
	return nil
}

// probeFile opens path for writing without truncating it, and removes it again if it did
// not exist before.
func probeFile(path string) error {
	_, statErr := os.Stat(path)
	file, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	file.Close()
	if errors.Is(statErr, os.ErrNotExist) {
		return os.Remove(path)
	}
	return nil
}

// unwrapPath drops the *PathError's repetition of the path the message already names.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// maxErrors is --max-errors: how many Redis or network errors a phase may see, as a count
// (N) or a share of its attempts (P%).
type maxErrors struct {
	set     bool
	count   uint64
	percent float64
	raw     string
}

func (m *maxErrors) String() string { return m.raw }
func (m *maxErrors) Type() string   { return "N|P%" }

func (m *maxErrors) Set(s string) error {
	s = strings.TrimSpace(s)
	if p, ok := strings.CutSuffix(s, "%"); ok {
		v, err := strconv.ParseFloat(p, 64)
		if err != nil || v < 0 || v > 100 {
			return fmt.Errorf("want a count (e.g. 10) or a percentage of attempts from 0%% to 100%% (e.g. 1%%)")
		}
		*m = maxErrors{set: true, percent: v, raw: s}
		return nil
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return fmt.Errorf("want a count (e.g. 10) or a percentage of attempts (e.g. 1%%)")
	}
	*m = maxErrors{set: true, count: v, raw: s}
	return nil
}

// exceeded describes the first result with more errors than allowed, "" when none has.
func (m *maxErrors) exceeded(results []report.Result) string {
	if !m.set {
		return ""
	}
	for _, r := range results {
		attempts := r.Acquired + r.Timeouts + r.Errors
		switch {
		case m.raw != "" && strings.HasSuffix(m.raw, "%"):
			if attempts > 0 && float64(r.Errors)*100 > m.percent*float64(attempts) {
				return fmt.Sprintf("%s: %d Redis or network errors in %d attempts (%.2f%%), more than --max-errors %s",
					resultName(r), r.Errors, attempts, float64(r.Errors)*100/float64(attempts), m.raw)
			}
		case r.Errors > m.count:
			return fmt.Sprintf("%s: %d Redis or network errors, more than --max-errors %s", resultName(r), r.Errors, m.raw)
		}
	}
	return ""
}

// checkReplicas refuses --wait-replicas N on a target whose masters have fewer than N
// replicas: every acquire would wait for confirmations that cannot come, and time out.
func checkReplicas(ctx context.Context, cfg *workload.Config, conn *target.Conn) error {
	if cfg.WaitReplicas == 0 {
		return nil
	}
	have, err := replicas(ctx, conn)
	if err != nil {
		return fmt.Errorf("--wait-replicas: counting the target's replicas: %w", err)
	}
	if have < cfg.WaitReplicas {
		return usageErrorf("invalid --wait-replicas %d: the target's master has %d replica(s) (%s %s); spawn --topology sentinel (1 replica) or point --redis at a master with replicas",
			cfg.WaitReplicas, have, conn.Mode, conn.Topology)
	}
	return nil
}

// replicas is the fewest connected replicas any master of the target has.
func replicas(ctx context.Context, conn *target.Conn) (int, error) {
	if conn.Mode == "embedded" {
		return 0, nil
	}
	fewest := -1
	for _, n := range target.Nodes(conn.Client) {
		info, err := n.Client.Do(ctx, n.Client.B().Info().Section("replication").Build()).ToString()
		if err != nil {
			return 0, err
		}
		count, _ := strconv.Atoi(target.InfoField(info, "connected_slaves"))
		if target.InfoField(info, "role") == "master" && (fewest < 0 || count < fewest) {
			fewest = count
		}
	}
	return max(fewest, 0), nil
}
