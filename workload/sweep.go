package workload

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/lockbench/lockbench/report"
)

// SweepParams are the parameters a sweep can vary: the phase settings that say so.
var SweepParams = sweepParams()

// ParseSweep reads --param NAME=V1,V2,..., each value once (SweepPhases refuses two
// spellings of one value).
func ParseSweep(s string) (param string, values []string, err error) {
	name, list, ok := strings.Cut(s, "=")
	if !ok || !slices.Contains(SweepParams, name) {
		return "", nil, &ConfigError{Field: "param", Value: s, Reason: "want NAME=V1,V2,... with NAME one of " + strings.Join(SweepParams, ", ")}
	}
	for _, v := range strings.Split(list, ",") {
		switch v = strings.TrimSpace(v); {
		case slices.Contains(values, v):
			return "", nil, &ConfigError{Field: "param", Value: s, Reason: v + " is listed twice; each value is one phase", bare: true}
		case v != "":
			values = append(values, v)
		}
	}
	if len(values) == 0 {
		return "", nil, &ConfigError{Field: "param", Value: s, Reason: "no values; want NAME=V1,V2,..."}
	}
	return name, values, nil
}

// SweepPhases returns one phase per strategy of cfg per value, in that order, each with
// param set to the value and checked as Validate checks a phase, by the setting's bound, by
// what the run around it allows (a hold within the phase) and by the memory it needs: every
// value is judged before anything runs, and a bad one is named as --param NAME=VALUE. Two
// values that are one (ttl=1s,1000ms) are refused: each value is a phase. cfg must be
// validated.
func SweepPhases(cfg *Config, param string, values []string) ([]Phase, error) {
	var out []Phase
	avail := AvailableMemory()
	for _, strategy := range cfg.Strategies {
		seen := map[string]string{} // a value as the setting prints it: as the user wrote it
		for _, v := range values {
			ph := cfg.Phase(strategy)
			if err := setParam(&ph, param, v); err != nil {
				return nil, err
			}
			st, _ := LookupPhaseSetting(param)
			if first, dup := seen[st.Get(&ph)]; dup {
				return nil, &ConfigError{Field: "param", Value: param + "=" + strings.Join(values, ","),
					Reason: fmt.Sprintf("%s and %s are one value, listed twice; each value is one phase", first, v)}
			}
			seen[st.Get(&ph)] = v
			ph.Label, ph.ParamValue = param+"="+v, v
			if err := ph.validate(); err != nil {
				return nil, paramError(err, param, v)
			}
			if err := cfg.holdFits(&ph); err != nil {
				return nil, paramError(err, param, v)
			}
			if err := CheckMemory([]Phase{ph}, avail); err != nil {
				return nil, paramError(err, param, v)
			}
			if err := CheckStartUp([]Phase{ph}, runtime.GOMAXPROCS(0)); err != nil {
				return nil, paramError(err, param, v)
			}
			out = append(out, ph)
		}
	}
	return out, nil
}

// paramError names --param NAME=V, as the user typed it, in an error about the swept
// setting itself (a ttl the strategy refuses); errors about other settings stay as they are.
func paramError(err error, param, v string) error {
	var ce *ConfigError
	if errors.As(err, &ce) && ce.Field == param {
		return &ConfigError{Field: "param", Value: param + "=" + v, Reason: ce.Reason}
	}
	return err
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

// SweepOptions are what a user asks of a sweep's answer besides safety.
type SweepOptions struct {
	// MaxBlocked is the longest a holder that died holding its lock (holder-crash) may
	// keep its key from everyone (--max-blocked); 0 = no such objective. A ttl or watchdog
	// sweep then answers with the shortest setting that stayed safe within it, or none.
	MaxBlocked time.Duration
}

// Validate reports an objective that cannot be met by anything, or that the sweep of
// param does not weigh, naming its flag.
func (o SweepOptions) Validate(param string) error {
	switch {
	case o.MaxBlocked < 0:
		return &ConfigError{Field: "max-blocked", Value: o.MaxBlocked.String(), Reason: "want a duration >= 0 (0 = no objective), e.g. 5s"}
	case o.MaxBlocked > 0 && param != "ttl" && param != "watchdog":
		return &ConfigError{Field: "max-blocked", Value: o.MaxBlocked.String(), bare: true,
			Reason: fmt.Sprintf("it weighs a ttl or watchdog sweep (how long a dead holder's lease blocks its key); a %s sweep has no lease to weigh: drop it, or sweep ttl or watchdog", param)}
	}
	return nil
}

// Recommend derives advice from a sweep's results: lines a user can act on.
func Recommend(param string, results []report.Result) []string {
	return RecommendWith(param, results, SweepOptions{})
}

// RecommendWith is Recommend with the user's objectives. A ttl or watchdog sweep whose
// phases saw holders die (holder-crash), or that has a --max-blocked objective, weighs
// both sides of the setting: too short breaks under pauses, too long keeps a dead
// holder's key from everyone.
func RecommendWith(param string, results []report.Result, o SweepOptions) []string {
	var out []string
	for _, group := range byStrategy(results) {
		weigh := o.MaxBlocked > 0 || slices.ContainsFunc(group, func(r report.Result) bool { return r.Safety.CrashedHolders > 0 })
		switch param {
		case "ttl":
			if weigh {
				out = append(out, weighLease("ttl", group, func(r report.Result) int64 { return r.TTLMS }, o))
				continue
			}
			out = append(out, recommendTTL(group))
		case "watchdog":
			out = append(out, recommendWatchdog(group)...)
			if weigh {
				out = append(out, weighLease("watchdog", group, watchdogOrder, o))
			}
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

// unsafe describes what went wrong in a phase, "" when nothing did. It agrees with the
// phase's verdict: overlaps count only when the verdict is not safe (a fence refused
// their stale writes), and so do lost leases — under fencing a lapsed lease is what the
// fence is for, and the row reads safe (fenced); without it one is a stale holder the next
// pause turns into an overlap.
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
	if r.Safety.LostLeases > 0 && !r.Safety.Fencing {
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
		line := fmt.Sprintf("%s: smallest safe ttl %s (%s)", r.Strategy, r.ParamValue, safeAs(r))
		if len(failed) > 0 {
			line += "; unsafe below it — " + strings.Join(failed, "; ")
		}
		return line
	}
	return fmt.Sprintf("%s: no swept ttl was safe (%s); try a longer ttl or --watchdog auto", rs[0].Strategy, strings.Join(failed, "; "))
}

// safeAs says how a phase that unsafe passes was safe: "0 overlaps, 0 lost leases", or,
// fenced, what the fence refused.
func safeAs(r report.Result) string {
	if r.Safety.Overlaps == 0 && r.Safety.LostLeases == 0 {
		return "0 overlaps, 0 lost leases"
	}
	return fmt.Sprintf("%d overlaps, %d lost leases: %s", r.Safety.Overlaps, r.Safety.LostLeases, r.Verdict)
}

// watchdogOrder ranks renewal intervals from the shortest; off renews never, the longest.
func watchdogOrder(r report.Result) int64 {
	if r.WatchdogMS == 0 {
		return math.MaxInt64
	}
	return r.WatchdogMS
}

// weighLease names the shortest setting of param, by order, that stayed safe and kept no
// crashed key blocked past the objective, the longest a crash blocked a key there, and
// which constraint decided it: the shorter settings that broke (safety) or the longer
// ones that blocked too long (the objective). Without an objective, the shortest safe one
// wins: it also frees a dead holder's key soonest. When none meets both, it says so and
// why each failed.
func weighLease(param string, group []report.Result, order func(report.Result) int64, o SweepOptions) string {
	rs := slices.Clone(group)
	slices.SortStableFunc(rs, func(a, b report.Result) int { return cmpInt(order(a), order(b)) })
	name := rs[0].Strategy
	objective := ""
	if o.MaxBlocked > 0 {
		objective = " within --max-blocked " + o.MaxBlocked.String()
	}
	var broke, tooLong, unmeasured []string
	pick := -1
	for i, r := range rs {
		if what := unsafe(r); what != "" {
			broke = append(broke, r.ParamValue+": "+what)
			continue
		}
		if o.MaxBlocked > 0 {
			if r.Safety.BlockedAfterCrash == nil {
				unmeasured = append(unmeasured, r.ParamValue)
				continue
			}
			if b := blocked(r); b > o.MaxBlocked {
				tooLong = append(tooLong, fmt.Sprintf("%s blocked a key for %s after a crash", r.ParamValue, fmtDur(b)))
				continue
			}
		}
		if pick < 0 {
			pick = i
		}
	}
	if pick < 0 {
		line := fmt.Sprintf("%s: no swept %s is both safe and%s", name, param, objective)
		if objective == "" {
			line = fmt.Sprintf("%s: no swept %s stayed safe", name, param)
		}
		var why []string
		if len(broke) > 0 {
			why = append(why, "unsafe — "+strings.Join(broke, "; "))
		}
		if len(tooLong) > 0 {
			why = append(why, "too long — "+strings.Join(tooLong, "; "))
		}
		if len(unmeasured) > 0 {
			why = append(why, "no crash measured at "+strings.Join(unmeasured, ", ")+" (add --fault holder-crash:p=P)")
		}
		return line + ": " + strings.Join(why, "; ")
	}
	r := rs[pick]
	line := fmt.Sprintf("%s: %s %s, the shortest that stayed safe%s", name, param, r.ParamValue, objective)
	if b := r.Safety.BlockedAfterCrash; b != nil {
		line += fmt.Sprintf("; a crash there blocked a key for up to %s (p50 %s)", fmtDur(blocked(r)), fmtMS(b.P50))
		if b.Stuck > 0 {
			line += fmt.Sprintf(", %d still blocked when the phase ended (a longer --duration settles them)", b.Stuck)
		}
	} else {
		line += "; no holder crashed there"
	}
	var decided []string
	if len(broke) > 0 {
		decided = append(decided, "safety decided it: shorter broke — "+strings.Join(broke, "; "))
	}
	if len(tooLong) > 0 {
		decided = append(decided, "the objective rules out longer — "+strings.Join(tooLong, "; "))
	}
	if pick == 0 && len(tooLong) == 0 {
		decided = append(decided, "it is the shortest swept: try shorter to find the limit")
	}
	for _, later := range rs[pick+1:] {
		if b := later.Safety.BlockedAfterCrash; b != nil && unsafe(later) == "" && o.MaxBlocked == 0 {
			decided = append(decided, fmt.Sprintf("%s would block a key for %s", later.ParamValue, fmtDur(blocked(later))))
		}
	}
	return line + "; " + strings.Join(decided, "; ")
}

// blocked is the longest a crash is known to have kept a key of r from everyone.
func blocked(r report.Result) time.Duration {
	return time.Duration(r.Safety.BlockedAfterCrash.Longest()) * time.Millisecond
}

// fmtDur rounds a blocked time for a sentence: 2.01s, 480ms.
func fmtDur(d time.Duration) string {
	if d >= time.Second {
		return d.Round(10 * time.Millisecond).String()
	}
	return d.Round(time.Millisecond).String()
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
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
