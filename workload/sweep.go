package workload

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/lockbench/lockbench/report"
)

// SweepParams are the parameters a sweep can vary: the phase settings that say so.
var SweepParams = sweepParams()

// ParseSweep reads --param NAME=V1,V2,...
func ParseSweep(s string) (param string, values []string, err error) {
	name, list, ok := strings.Cut(s, "=")
	if !ok || !slices.Contains(SweepParams, name) {
		return "", nil, &ConfigError{Field: "param", Value: s, Reason: "want NAME=V1,V2,... with NAME one of " + strings.Join(SweepParams, ", ")}
	}
	for _, v := range strings.Split(list, ",") {
		if v = strings.TrimSpace(v); v != "" {
			values = append(values, v)
		}
	}
	if len(values) == 0 {
		return "", nil, &ConfigError{Field: "param", Value: s, Reason: "no values; want NAME=V1,V2,..."}
	}
	return name, values, nil
}

// SweepPhases returns one phase per strategy of cfg per value, in that order, each with
// param set to the value. cfg must be validated.
func SweepPhases(cfg *Config, param string, values []string) ([]Phase, error) {
	var out []Phase
	for _, strategy := range cfg.Strategies {
		for _, v := range values {
			ph := cfg.Phase(strategy)
			if err := setParam(&ph, param, v); err != nil {
				return nil, err
			}
			ph.Label, ph.ParamValue = param+"="+v, v
			out = append(out, ph)
		}
	}
	return out, nil
}

// setParam sets one swept parameter on a phase, as the flag of that name would.
func setParam(ph *Phase, param, v string) error {
	st, ok := LookupPhaseSetting(param)
	if !ok || !st.Sweep {
		return &ConfigError{Field: "param", Value: param + "=" + v, Reason: "valid: " + strings.Join(SweepParams, ", ")}
	}
	if err := st.Set(ph, v); err != nil {
		return &ConfigError{Field: "param", Value: param + "=" + v, Reason: err.Error()}
	}
	return nil
}

// Recommend derives advice from a sweep's results: lines a user can act on.
func Recommend(param string, results []report.Result) []string {
	var out []string
	for _, group := range byStrategy(results) {
		switch param {
		case "ttl":
			out = append(out, recommendTTL(group))
		case "watchdog":
			out = append(out, recommendWatchdog(group)...)
		case "wait":
			out = append(out, recommendWait(group))
		default:
			out = append(out, recommendScale(param, group))
		}
	}
	return out
}

// byStrategy groups results by strategy, keeping the order of first appearance.
func byStrategy(results []report.Result) [][]report.Result {
	var order []string
	groups := map[string][]report.Result{}
	for _, r := range results {
		if _, ok := groups[r.Strategy]; !ok {
			order = append(order, r.Strategy)
		}
		groups[r.Strategy] = append(groups[r.Strategy], r)
	}
	out := make([][]report.Result, 0, len(order))
	for _, s := range order {
		out = append(out, groups[s])
	}
	return out
}

// unsafe describes what went wrong in a phase, "" when nothing did.
func unsafe(r report.Result) string {
	var parts []string
	if r.Safety.Overlaps > 0 && !strings.HasPrefix(r.Verdict, "safe") {
		parts = append(parts, fmt.Sprintf("%d overlaps", r.Safety.Overlaps))
	}
	if r.Safety.Misdeletes > 0 {
		parts = append(parts, fmt.Sprintf("%d misdeletes", r.Safety.Misdeletes))
	}
	if r.Safety.FenceRegressions > 0 {
		parts = append(parts, fmt.Sprintf("%d fence regressions", r.Safety.FenceRegressions))
	}
	if r.Safety.LostLeases > 0 {
		parts = append(parts, fmt.Sprintf("%d lost leases", r.Safety.LostLeases))
	}
	if r.Safety.StuckKeys > 0 {
		parts = append(parts, fmt.Sprintf("%d stuck keys", r.Safety.StuckKeys))
	}
	return strings.Join(parts, ", ")
}

// recommendTTL names the smallest ttl under which the phase was safe.
func recommendTTL(group []report.Result) string {
	rs := slices.Clone(group)
	slices.SortStableFunc(rs, func(a, b report.Result) int { return int(a.TTLMS - b.TTLMS) })
	var failed []string
	for _, r := range rs {
		if what := unsafe(r); what != "" {
			failed = append(failed, fmt.Sprintf("%s: %s", r.ParamValue, what))
			continue
		}
		line := fmt.Sprintf("%s: smallest safe ttl %s (0 overlaps, 0 lost leases)", r.Strategy, r.ParamValue)
		if len(failed) > 0 {
			line += "; unsafe below it — " + strings.Join(failed, "; ")
		}
		return line
	}
	return fmt.Sprintf("%s: no swept ttl was safe (%s); try a longer ttl or --watchdog auto", rs[0].Strategy, strings.Join(failed, "; "))
}

// recommendWatchdog prices each renewal interval: renewal commands per second per held
// lock, and their share of what Redis ran.
func recommendWatchdog(group []report.Result) []string {
	var out []string
	for _, r := range group {
		line := fmt.Sprintf("%s watchdog=%s: ", r.Strategy, r.ParamValue)
		held := heldLocks(r)
		switch {
		case r.Renewals == 0:
			line += "no renewals"
		case held > 0 && r.DurationS > 0:
			// A renewal is one script call running 3 commands (EVALSHA, GET/HEXISTS, PEXPIRE).
			perLock := float64(r.Renewals) * 3 / r.DurationS / held
			line += fmt.Sprintf("%.2f renewal commands/s per held lock", perLock)
			if r.Redis.Measured && r.Redis.Commands > 0 {
				share := float64(r.Renewals) * 3 / float64(r.Redis.Commands)
				line += fmt.Sprintf(", %.1f%% of Redis commands (≈ of its CPU, %.1f%% of a core in all)", 100*share, r.Redis.CPUPercent)
			}
		default:
			line += fmt.Sprintf("%d renewals", r.Renewals)
		}
		if what := unsafe(r); what != "" {
			line += "; UNSAFE: " + what
		} else {
			line += "; safe"
		}
		out = append(out, line)
	}
	return out
}

// heldLocks is the mean number of locks held at once, by Little's law: throughput times
// mean hold time.
func heldLocks(r report.Result) float64 {
	return r.AcquireRate * r.LatencyUS.Hold.Mean / 1e6
}

// recommendWait names the policy with the lowest tail and the one Redis pays least for.
func recommendWait(group []report.Result) string {
	best := func(score func(report.Result) float64) report.Result {
		return slices.MinFunc(group, func(a, b report.Result) int { return cmpFloat(score(a), score(b)) })
	}
	tail := best(func(r report.Result) float64 { return p99OrInf(r) })
	cheap := best(func(r report.Result) float64 {
		if !r.Redis.Measured || r.Acquired == 0 {
			return math.Inf(1)
		}
		return r.Redis.CommandsPerAcquire
	})
	line := fmt.Sprintf("%s: lowest acquire p99 with wait=%s (%s)", tail.Strategy, tail.ParamValue, report.FormatUS(float64(tail.LatencyUS.Acquire.P99)))
	if cheap.Redis.Measured && cheap.Acquired > 0 {
		line += fmt.Sprintf("; fewest Redis commands per acquire with wait=%s (%.1f)", cheap.ParamValue, cheap.Redis.CommandsPerAcquire)
	}
	return line
}

func p99OrInf(r report.Result) float64 {
	if r.Acquired == 0 {
		return math.Inf(1)
	}
	return float64(r.LatencyUS.Acquire.P99)
}

// recommendScale finds where throughput peaks along a load parameter and what the tail
// does on the way.
func recommendScale(param string, group []report.Result) string {
	peak := slices.MaxFunc(group, func(a, b report.Result) int { return cmpFloat(a.AcquireRate, b.AcquireRate) })
	first, last := group[0], group[len(group)-1]
	line := fmt.Sprintf("%s: peak %s acquires/s at %s=%s; acquire p99 goes from %s at %s to %s at %s",
		peak.Strategy, report.FormatRate(peak.AcquireRate), param, peak.ParamValue,
		report.FormatUS(float64(first.LatencyUS.Acquire.P99)), first.ParamValue,
		report.FormatUS(float64(last.LatencyUS.Acquire.P99)), last.ParamValue)
	if what := unsafe(peak); what != "" {
		line += "; UNSAFE at the peak: " + what
	}
	return line
}
