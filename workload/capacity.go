package workload

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/lockbench/lockbench/report"
)

// SLO is what a capacity step must meet: acquire p99 (from the intended start) at most P99,
// at most TimeoutRate of acquisitions timing out or failing, and at least 98% of the
// arrivals offered acquired, counted whole (see judge).
type SLO struct {
	P99         time.Duration
	TimeoutRate float64 // a fraction: 0.001 = 0.1%
}

// MinAchieved is the share of the offered rate a passing step must achieve.
const MinAchieved = 0.98

const sloForms = "want p99=DURATION[,timeouts=PERCENT%], e.g. p99=5ms,timeouts=0.1%"

// ParseSLO reads "p99=5ms[,timeouts=0.1%]". Without timeouts, 0.1% is allowed.
func ParseSLO(s string) (SLO, error) {
	slo := SLO{TimeoutRate: 0.001}
	bad := func(reason string) (SLO, error) {
		return SLO{}, &ConfigError{Field: "slo", Value: s, Reason: reason + "; " + sloForms}
	}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok {
			return bad(fmt.Sprintf("%q is not NAME=VALUE", kv))
		}
		switch k {
		case "p99":
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				return bad("p99 must be a duration > 0")
			}
			slo.P99 = d
		case "timeouts":
			f, err := strconv.ParseFloat(strings.TrimSuffix(v, "%"), 64)
			if err != nil || f < 0 || f > 100 {
				return bad("timeouts must be a percentage from 0% to 100%")
			}
			slo.TimeoutRate = f / 100
		default:
			return bad(fmt.Sprintf("unknown objective %q", k))
		}
	}
	if slo.P99 == 0 {
		return bad("p99 is required")
	}
	return slo, nil
}

func (s SLO) String() string {
	return fmt.Sprintf("p99<=%s timeouts<=%s%%", s.P99, strconv.FormatFloat(100*s.TimeoutRate, 'g', -1, 64))
}

// judge turns a step's result into a CapacityStep with its verdict.
func (s SLO) judge(stage string, r report.Result) report.CapacityStep {
	failed := float64(r.Timeouts + r.Errors)
	step := report.CapacityStep{
		Stage: stage, Offered: r.OfferedRate, Achieved: r.AcquireRate, Dropped: r.Dropped,
		P99US: r.LatencyUS.Acquire.P99, RedisCPUPercent: r.Redis.CPUPercent,
		LockbenchCPUPercent: r.Client.CPUPercent, LockbenchCores: r.Client.Cores,
		HostCPUPercent: r.Client.HostCPUPercent, HostCores: r.Client.HostCores, HostStealPercent: r.Client.HostStealPercent, RoundTripUS: r.LatencyUS.Release.P50, Keys: r.Keys,
		SchedP99US: r.Client.SchedP99US, SchedMeanUS: r.Client.SchedMeanUS, StartDelayP99US: r.Client.StartDelayP99US,
	}
	if r.Acquired > 0 {
		step.HandoffRatio = min(float64(r.LatencyUS.Handoff.Count)/float64(r.Acquired), 1)
	}
	if total := float64(r.Acquired) + failed; total > 0 {
		step.TimeoutRate = failed / total
	}
	var why []string
	// Judged on whole arrivals: the window offers the arrivals due in it, one by one, and
	// at 15.6/s a 500ms step has 7 of them, or 8 — a rate of 7.8 would fail a step that took
	// every one. The arrivals the window surely holds are the whole part of rate x window.
	if offered := math.Floor(r.OfferedRate * r.DurationS); offered >= 1 && float64(r.Acquired) < MinAchieved*offered {
		why = append(why, fmt.Sprintf("achieved %d of %.0f arrivals (%.1f%%)", r.Acquired, offered, 100*float64(r.Acquired)/offered))
	}
	if p99 := time.Duration(step.P99US) * time.Microsecond; p99 > s.P99 {
		why = append(why, fmt.Sprintf("p99 %s > %s", report.FormatUS(float64(step.P99US)), s.P99))
	}
	if step.TimeoutRate > s.TimeoutRate {
		why = append(why, fmt.Sprintf("timeouts %.2f%% > %s%%", 100*step.TimeoutRate, strconv.FormatFloat(100*s.TimeoutRate, 'g', -1, 64)))
	}
	if r.Interrupted || r.Error != "" {
		why = append(why, "did not finish")
	}
	step.Pass, step.Reason = len(why) == 0, strings.Join(why, ", ")
	return step
}

// Ramp is how a capacity search steps: up by Factor from Start until a step fails, then a
// bisection between the last passing and the first failing rate.
type Ramp struct {
	Start        float64       // first offered rate, acquisitions/s. Default 1000.
	Factor       float64       // ramp multiplier, > 1. Default 2.
	StepDuration time.Duration // measured time per step. Default 3s.
	Bisections   int           // bisection steps at most. Default 5.
	MaxRate      float64       // the ramp stops here even if every step passes. Default 10M/s.
	MinRate      float64       // ramping down when the first step fails stops here. Default 10/s.
}

// Validate refuses a ramp that makes no search: a first rate beyond what lockbench offers,
// or a factor that leaves the ramp one step (--start 1e12, --factor 1e308 ended "passed"
// after one step, or none); errors name the flag and the valid range. It fills the
// defaults of Bisections, MaxRate and MinRate; a zero Start, Factor or StepDuration it
// refuses as given (Capacity fills those first).
func (r *Ramp) Validate() error {
	if r.Bisections == 0 {
		r.Bisections = 5
	}
	if r.MaxRate == 0 {
		r.MaxRate = MaxRate
	}
	if r.MinRate == 0 {
		r.MinRate = 10
	}
	g := func(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
	bad := func(field string, v float64, reason string) error {
		return &ConfigError{Field: field, Value: g(v), Reason: reason, bare: true}
	}
	switch {
	case !(r.Factor > 1) || math.IsInf(r.Factor, 0):
		return bad("factor", r.Factor, "want more than 1: each step offers more than the last")
	// A ramp of one step is refused unless asked for (Start = MaxRate: that rate alone).
	case !(r.Start > 0) || r.Start > r.MaxRate || r.Start < r.MaxRate && r.Start > r.MaxRate/DefaultFactor && r.Start*r.Factor > r.MaxRate:
		return bad("start", r.Start, fmt.Sprintf("want a first rate above 0 and at most %s acquisitions/s: each step offers --factor %s times the last, up to %s/s, the most lockbench offers, and a search takes two steps at least",
			g(math.Floor(r.MaxRate/r.Factor)), g(r.Factor), g(r.MaxRate)))
	case r.Start < r.MaxRate && r.Start*r.Factor > r.MaxRate:
		return bad("factor", r.Factor, fmt.Sprintf("want more than 1 and at most %s: with --start %s, the next step must stay within %s/s, the most lockbench offers, or the search is one step",
			g(math.Floor(r.MaxRate/r.Start)), g(r.Start), g(r.MaxRate)))
	case r.StepDuration < MinDuration:
		// Each step is a phase's measured window (--duration's bound).
		return &ConfigError{Field: "step-duration", Value: r.StepDuration.String(), bare: true,
			Reason: fmt.Sprintf("want a duration of at least %s (a shorter step holds too few round trips to measure), e.g. 3s", MinDuration)}
	}
	return nil
}

// fill gives the ramp's settings their defaults where they are zero.
func (r *Ramp) fill() {
	if r.Start == 0 {
		r.Start = 1000
	}
	if r.Factor == 0 {
		r.Factor = DefaultFactor
	}
	if r.StepDuration == 0 {
		r.StepDuration = 3 * time.Second
	}
}

// DefaultFactor is the ramp's multiplier when none is given.
const DefaultFactor = 2

// Capacity searches, for each phase of cfg, the highest open-loop rate at which the
// strategy meets slo on the lock service b (services/redis's Backend for Redis). Every step is a phase of
// its own on fresh keys. onStep, when set, sees each step as it finishes. It returns the
// answers and every step's full result.
func Capacity(ctx context.Context, cfg Config, b Backend, o Options, slo SLO, ramp Ramp, onStep func(string, report.CapacityStep)) ([]report.Capacity, []report.Result, error) {
	run := func(ctx context.Context, _ int, sub Config) ([]report.Result, error) { return Run(ctx, sub, b, o) }
	return CapacityWith(ctx, cfg, run, slo, ramp, onStep)
}

// StepRunner runs one capacity step, sub: a Config of one phase, made from cfg.Phases[phase]
// with the step's rate and label. A --procs fleet runs it across its processes and
// returns the merged result.
type StepRunner func(ctx context.Context, phase int, sub Config) ([]report.Result, error)

// CapacityWith is Capacity with each step run by run.
func CapacityWith(ctx context.Context, cfg Config, run StepRunner, slo SLO, ramp Ramp, onStep func(string, report.CapacityStep)) ([]report.Capacity, []report.Result, error) {
	ramp.fill()
	if err := ramp.Validate(); err != nil {
		return nil, nil, err
	}
	cfg.Duration = ramp.StepDuration
	var err error
	if cfg.validated {
		// Only the duration changed since Validate: its bound, and the holds it must
		// outlast, are what to check again.
		duration, _ := LookupSetting("duration")
		err = duration.Check(&cfg)
		for i := 0; err == nil && i < len(cfg.Phases); i++ {
			err = cfg.holdFits(&cfg.Phases[i])
		}
	} else {
		err = cfg.Validate()
	}
	if err != nil {
		return nil, nil, err
	}
	var answers []report.Capacity
	var all []report.Result
	for i, base := range cfg.Phases {
		c := report.Capacity{Strategy: base.Strategy, SLO: slo.String()}
		step := func(stage string, rate float64) (bool, error) {
			ph := base
			ph.Rate, ph.Label = rate, fmt.Sprintf("%s %s/s", stage, report.FormatRate(rate))
			sub := cfg
			sub.Phases = []Phase{ph}
			rs, err := run(ctx, i, sub)
			all = append(all, rs...)
			if err != nil {
				return false, err
			}
			s := slo.judge(stage, rs[0])
			c.Steps = append(c.Steps, s)
			if onStep != nil {
				onStep(base.Strategy, s)
			}
			if s.Pass && rate > c.MaxRate {
				c.MaxRate, c.CPUPercentAtMax = rate, s.RedisCPUPercent
			}
			return s.Pass, nil
		}
		err := search(ramp, step)
		if err == nil {
			c.Bound, c.BoundBy, c.ClientBound = bound(c, ramp.StepDuration, slo.P99)
		}
		answers = append(answers, c)
		if err != nil {
			return answers, all, err
		}
	}
	return answers, all, nil
}

// search runs the ramp and the bisection with step, which reports whether a rate passed.
func search(ramp Ramp, step func(stage string, rate float64) (bool, error)) error {
	var pass, fail float64 // the highest passing and lowest failing rates so far; 0 = none
	for rate := ramp.Start; rate <= ramp.MaxRate; rate *= ramp.Factor {
		ok, err := step("ramp", rate)
		if err != nil {
			return err
		}
		if !ok {
			fail = rate
			break
		}
		pass = rate
	}
	if fail == 0 {
		return nil // passed all the way to MaxRate
	}
	for rate := fail / ramp.Factor; pass == 0 && rate >= ramp.MinRate; rate /= ramp.Factor {
		ok, err := step("ramp", rate) // the first step failed: come down until one passes
		if err != nil {
			return err
		}
		if ok {
			pass = rate
		} else {
			fail = rate
		}
	}
	for range ramp.Bisections {
		if pass == 0 || fail/pass < 1.05 {
			return nil
		}
		mid := math.Round((pass + fail) / 2)
		ok, err := step("bisect", mid)
		if err != nil {
			return err
		}
		if ok {
			pass = mid
		} else {
			fail = mid
		}
	}
	return nil
}

// Saturation thresholds of bound: a resource this busy on the step that failed is what
// stopped the ramp. A single-threaded Redis at 85% of a core on a shared VM is as full as it
// gets (the rest is the kernel's and the hypervisor's); lockbench's cores the same; the
// machine's, when it shares them with the server or other work, a little fuller.
const (
	redisSaturated     = 85.0 // % of one core
	lockbenchSaturated = 85.0 // % of its cores
	hostSaturated      = 90.0 // % of the machine's cores
	contended          = 0.5  // share of acquires that waited for a holder of their key
	droppedShare       = 0.02 // share of the offered arrivals no worker was free for
	// schedShare: lockbench's goroutines waited runnable for a processor this long at p99,
	// against the step's acquire p99, and the wait was lockbench's own queueing.
	schedShare = 0.5
	// startShare: lockbench ran a goroutine due at an instant (an arrival's start) this
	// late at p99, against the step's acquire p99. A token acquire waits on lockbench's
	// timers and scheduler at least three times in a row (its start, rueidis's flush delay
	// before the command is written, the reply's wake-up) and on the server once; the
	// first of them alone a quarter of the p99 is the client's delay, not the server's.
	startShare = 0.25
	// redisIdle: a server at most this busy (% of one core) queues a command for a fraction
	// of its service time (µs), so when the step's p99 missed its objective by less than
	// lockbench's start delay, that miss is the client's: the start delay alone covers it.
	// A busier server's queue may make the miss, and a start delay as small as the miss
	// near the answer's rate is no evidence against it.
	redisIdle = 50.0
	// minSteal: the hypervisor's steal, in cores, that a host-cpu bound names.
	minSteal = 0.05
	// stealBound: the hypervisor's steal, in % of the machine's CPU, that bounds a step
	// whose machine was not otherwise busy: a tenth of every core's time paused.
	stealBound = 10.0
)

// bound names what stopped c's search, read on the lowest failing step above MaxRate: the
// resource that was saturated there, in the order that decides whose capacity MaxRate is —
// the server's CPU first (the answer asked for), then lockbench's own cores (its
// GOMAXPROCS, or the machine's cores when a --procs fleet has more Ps than the machine has
// cores), the machine's (busy, or a tenth of it taken by the hypervisor), lockbench's own
// delays (its goroutines queued for a core, or started late: a large share of the acquire
// p99, or, with Redis half idle, as much as the step missed sloP99 by) and the workers
// (then MaxRate is the client's limit, client is true), then the keys' contention, and the
// latency when nothing was saturated and lockbench's delays were small.
func bound(c report.Capacity, step, sloP99 time.Duration) (kind, by string, client bool) {
	if len(c.Steps) == 0 {
		return "", "", false
	}
	var f *report.CapacityStep // the lowest failing rate above MaxRate
	for i := range c.Steps {
		st := &c.Steps[i]
		if !st.Pass && st.Offered > c.MaxRate && (f == nil || st.Offered < f.Offered) {
			f = st
		}
	}
	if f == nil {
		return "none", "no step failed: every offered rate up to " + report.FormatRate(c.Steps[len(c.Steps)-1].Offered) + "/s met the SLO", false
	}
	at := " at " + report.FormatRate(f.Offered) + "/s"
	busy := f.LockbenchCPUPercent / 100 * float64(f.LockbenchCores)
	// The cores lockbench can have: its Ps, but no more than the machine has (a fleet of
	// --procs children on two cores may have two Ps each).
	cores := f.LockbenchCores
	if f.HostCores > 0 && f.HostCores < cores {
		cores = f.HostCores
	}
	lb := fmt.Sprintf("lockbench %.1f/%d", busy, f.LockbenchCores)
	redis := fmt.Sprintf("Redis CPU %.0f%%", f.RedisCPUPercent)
	rtt := "round trip " + report.FormatUS(float64(f.RoundTripUS))
	p99 := float64(f.P99US)
	miss := p99 - float64(sloP99.Microseconds()) // how far the step's p99 missed its objective
	switch {
	case f.RedisCPUPercent >= redisSaturated:
		return "redis-cpu", fmt.Sprintf("Redis CPU %.0f%% of a core%s (%s)", f.RedisCPUPercent, at, lb), false
	case cores > 0 && busy >= lockbenchSaturated/100*float64(cores):
		of := fmt.Sprintf("%d cores", cores)
		if cores < f.LockbenchCores {
			of = fmt.Sprintf("the machine's %d cores (%d Ps across its processes)", cores, f.LockbenchCores)
		}
		return "lockbench-cpu", fmt.Sprintf("lockbench: %.1f of %s busy%s (%s) — add --procs or machines", busy, of, at, redis), true
	case f.HostCPUPercent < hostSaturated && f.HostStealPercent >= stealBound:
		// Not busy, but a part of its CPU was not the machine's to use: the step's latency
		// is the other guests' as much as Redis's or lockbench's.
		return "host-cpu", fmt.Sprintf("the machine: the hypervisor took %.1f of its %d cores%s (steal %.0f%%: its CPUs waited while the host ran other guests; %s, %s) — measure on dedicated cores",
			f.HostStealPercent/100*float64(f.HostCores), f.HostCores, at, f.HostStealPercent, lb, redis), true
	case f.HostCPUPercent >= hostSaturated:
		// Who kept it busy: lockbench and Redis (when Redis runs here), or other work, the
		// hypervisor's included (steal: a VM's CPUs given to other guests).
		hostBusy := f.HostCPUPercent / 100 * float64(f.HostCores)
		steal := f.HostStealPercent / 100 * float64(f.HostCores)
		stolen := ""
		if steal >= minSteal {
			stolen = fmt.Sprintf(", %.1f the hypervisor's (steal)", steal)
		}
		if other := hostBusy - busy - f.RedisCPUPercent/100; other >= hostBusy/2 {
			advice := "measure on a quiet machine"
			if steal >= other/2 {
				advice = "the host ran other guests on this VM's cores: measure on dedicated cores"
			}
			return "host-cpu", fmt.Sprintf("the machine: %.1f of %d cores busy%s, %.1f of them other work%s (%s, %s) — %s",
				hostBusy, f.HostCores, at, other, stolen, lb, redis, advice), true
		}
		return "host-cpu", fmt.Sprintf("the machine: %.1f of %d cores busy%s%s (%s, %s) — run lockbench on another machine than Redis",
			hostBusy, f.HostCores, at, stolen, lb, redis), true
	case p99 > 0 && f.SchedP99US >= schedShare*p99:
		return "lockbench-scheduling", fmt.Sprintf("lockbench: its goroutines waited %s (p99) for one of its %d cores to run on, %.0f%% of acquire p99 %s%s (%s, %s, %s) — give it more cores (GOMAXPROCS), --procs or machines",
			report.FormatUS(f.SchedP99US), f.LockbenchCores, 100*f.SchedP99US/p99, report.FormatUS(p99), at, lb, redis, rtt), true
	case p99 > 0 && f.StartDelayP99US > 0 && (f.StartDelayP99US >= startShare*p99 ||
		miss > 0 && f.StartDelayP99US >= miss && f.RedisCPUPercent < redisIdle):
		share := fmt.Sprintf("%.0f%% of acquire p99 %s", 100*f.StartDelayP99US/p99, report.FormatUS(p99))
		if f.StartDelayP99US < startShare*p99 {
			share = fmt.Sprintf("more than acquire p99 %s missed %s by, with Redis under %.0f%% of a core", report.FormatUS(p99), sloP99, redisIdle)
		}
		return "lockbench-scheduling", fmt.Sprintf("lockbench: its goroutines started %s late (p99: a probe that sleeps until a due instant, as an arrival does), %s%s (%s, %s, %s, its goroutines' scheduling p99 %s) — give it more cores (GOMAXPROCS), --procs or machines",
			report.FormatUS(f.StartDelayP99US), share, at, lb, redis, rtt, report.FormatUS(f.SchedP99US)), true
	case f.Offered > 0 && float64(f.Dropped) >= droppedShare*f.Offered*step.Seconds():
		return "workers", fmt.Sprintf("workers: %d arrivals found every worker busy%s (%s, %s) — add --workers", f.Dropped, at, lb, redis), true
	case f.HandoffRatio >= contended:
		return "contention", fmt.Sprintf("contention on %d keys: %.0f%% of acquires waited for a holder%s (%s)", f.Keys, 100*f.HandoffRatio, at, redis), false
	}
	start := ""
	if f.StartDelayP99US > 0 {
		start = ", lockbench's start delay p99 " + report.FormatUS(f.StartDelayP99US)
	}
	return "latency", fmt.Sprintf("latency: nothing saturated%s (%s, %s, %s%s)", at, redis, lb, rtt, start), false
}
