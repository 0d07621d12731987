package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/lockbench/lockbench/profiles"
	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/services"
	"github.com/lockbench/lockbench/services/redis"
	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/workload"
)

// Checks of what the user gave, made before anything runs: a bad value found after a
// 90-second run, or silently replaced by a default, is worse than an error at once.

// checkSetting checks the load setting named name (a flag name) of cfg by its declared
// bound (workload.Settings); nil for other names.
func checkSetting(name string, cfg *workload.Config) error {
	if s, ok := workload.LookupSetting(name); ok {
		return s.Check(cfg)
	}
	return nil
}

// checkCommandLine checks every load setting given on the command line, before a profile
// adds its own.
func (f *loadFlags) checkCommandLine() error {
	for _, s := range workload.Settings {
		if f.cmdline[s.Name] {
			if err := s.Check(&f.cfg); err != nil {
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
			return usageErrorf("invalid --strategy %q: 'all' runs the articles' Redis strategies (%s) and goes alone; to add libraries or other lock services, list every name", list, strings.Join(strategies.Core(), ","))
		}
	}
	return nil
}

// checkOutputPaths makes sure the report and its extra files can be written, by creating
// them now — before a long run is lost to a typo in a path — and that no two of them are
// one file. A file that did not exist is removed again; --hdr-dir is created.
func (f *loadFlags) checkOutputPaths() error {
	if f.out == "-" {
		if f.live == "-" {
			return usageErrorf("--live - and -o - both want stdout, where the NDJSON lines and the report would interleave; give the report a file (-o FILE), or drop -o - (with --live - the report goes to stderr)")
		}
		f.out = "" // -o - is stdout, as for most tools
	}
	files := []struct{ flag, path string }{{"out", f.out}, {"plot", f.plot}, {"html", f.html}, {"cpuprofile", f.cpuProfile}, {"memprofile", f.memProfile}}
	if f.live != "-" {
		files = append(files, struct{ flag, path string }{"live", f.live})
	}
	seen := map[string]string{}
	for _, p := range files {
		if p.path == "" {
			continue
		}
		abs, err := filepath.Abs(p.path)
		if err == nil {
			if other, dup := seen[abs]; dup {
				return usageErrorf("--%s and --%s name the same file %s: each output needs its own", other, p.flag, p.path)
			}
			seen[abs] = p.flag
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
				return fmt.Sprintf("%s: %d lock-server or network errors in %d attempts (%.2f%%), more than --max-errors %s",
					resultName(r), r.Errors, attempts, float64(r.Errors)*100/float64(attempts), m.raw)
			}
		case r.Errors > m.count:
			return fmt.Sprintf("%s: %d lock-server or network errors, more than --max-errors %s", resultName(r), r.Errors, m.raw)
		}
	}
	return ""
}

// checkExtra checks what the settings' bounds cannot: settings that make no sense together and
// list flags, once the profile has been applied.
func (f *loadFlags) checkExtra(cfg *workload.Config) error {
	if strings.TrimSpace(f.strategy) == "" {
		return usageErrorf("invalid --strategy %q: name at least one strategy (see 'lockbench strategies'), or all", f.strategy)
	}
	if f.command == "run" {
		if err := services.CheckList("strategy", f.strategy, false); err != nil {
			return err
		}
	}
	if cfg.MaxInflight != 0 && !slices.ContainsFunc(cfg.Phases, func(ph workload.Phase) bool { return ph.Rate > 0 }) && cfg.Rate == 0 {
		return usageErrorf("invalid --max-inflight %d: it bounds the open loop (--rate); in a closed loop --workers is what runs at once", cfg.MaxInflight)
	}
	if err := f.services.Check(); err != nil {
		return err
	}
	// 'all' names no strategy itself: a strategy of it that waits its own way (spin-lock)
	// ignores --wait rather than refusing the run.
	if err := checkApplies(cfg.Phases, cfg.WaitReplicas, f.strategy == "all" && !f.profileNamesStrategies()); err != nil {
		return err
	}
	// Counts this machine cannot hold (workload.CheckMemory declares what a worker and a
	// key cost), or would take minutes to start (workload.CheckStartUp).
	if err := workload.CheckMemory(cfg.Phases, workload.AvailableMemory()); err != nil {
		return err
	}
	return workload.CheckStartUp(cfg.Phases, runtime.GOMAXPROCS(0))
}

// checkApplies refuses a lock option set for a strategy that does not use it (a library or
// another lock service that waits or renews its own way): the header would name a setting
// the run never had.
func checkApplies(phases []workload.Phase, waitReplicas int, waitForAll bool) error {
	for _, ph := range phases {
		info, ok := strategies.Lookup(ph.Strategy)
		if !ok || info.Applies == nil {
			continue
		}
		for _, o := range []struct {
			name, value string
			set         bool
		}{
			{"wait", ph.Wait.String(), ph.Wait != (strategies.Wait{}) && !waitForAll},
			{"watchdog", ph.Watchdog.String(), ph.Watchdog.Enabled()},
			{"wait-replicas", strconv.Itoa(waitReplicas), waitReplicas > 0},
		} {
			if !o.set || slices.Contains(info.Applies, o.name) {
				continue
			}
			why := ph.Strategy + " does it its own way"
			if o.name == "wait-replicas" {
				why = ph.Strategy + " has no replica check to make"
				if info.Service != "" {
					why = "it WAITs for Redis replicas, and " + ph.Strategy + " runs on " + info.Service + ", whose writes a quorum commits"
				}
			}
			return usageErrorf("invalid --%s %s for %s: it does not apply (%s); %s honours: %s. Run it in a phase or run of its own",
				o.name, o.value, ph.Strategy, why, ph.Strategy, strings.Join(info.Applies, ", "))
		}
	}
	return nil
}

// profileNamesStrategies reports whether the run's phases come from a profile's own phases,
// each naming its strategy.
func (f *loadFlags) profileNamesStrategies() bool {
	return f.profile != "" && !f.cmdline["strategy"] && f.hasProfilePhases
}

// checkNodeTarget refuses a multi-process run (--node I/N, N > 1) on a Redis that
// lockbench would spawn for this process alone: its partners, on other machines or in
// other processes, cannot reach a private server on this one's loopback, and would wait
// out the barrier for nothing. The Redis of a live `lockbench target up` state file is
// shared by every process of this machine, and is accepted.
func (f *loadFlags) checkNodeTarget(cfg *workload.Config) error {
	b := cfg.Barrier
	rf := f.redisFlags()
	if b == nil || b.Nodes < 2 || rf.External() {
		return nil
	}
	if st, _, err := redis.Status(rf.State); err == nil && !st.Stale {
		return nil // `target up`'s servers: every process of this machine reaches them
	}
	return usageErrorf("invalid --node %s: the %d processes of a multi-process run meet at a barrier on one Redis, and without --redis lockbench would spawn a private one on this process's loopback that the others cannot reach; give --redis HOST:PORT (or start one for this machine's processes with 'lockbench target up')", f.node, b.Nodes)
}

// checkServiceFlags refuses a lock service's flags (--etcd, --etcd-members, --zookeeper,
// ...) in a run where no phase runs on that service: they would be silently ignored. The
// flags and the strategies come from the services and strategies registries; the home
// service (Redis) is reached by every run, and its flags always apply.
func (f *loadFlags) checkServiceFlags(cfg *workload.Config) error {
	used := map[string]bool{}
	for _, ph := range cfg.Phases {
		if info, ok := strategies.Lookup(ph.Strategy); ok {
			used[info.Service] = true
		}
	}
	for _, name := range f.services.Names() {
		if name == f.services.Home() || used[name] {
			continue
		}
		for _, flag := range f.services.FlagNames(name) {
			if !f.cmdline[flag] {
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
			return usageErrorf("--%s is for the strategies that run on %s (%s), and no phase of this run does; drop it, or add one of them to --strategy", flag, title, strings.Join(users, ", "))
		}
	}
	return nil
}
