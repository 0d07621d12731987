package workload

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/redistest"
	"github.com/lockbench/lockbench/report"
)

// A capacity search names what bound it, read on the lowest failing step above the
// answer; a bound on the client's side (its cores, the machine, its workers) marks the
// answer as the client's limit, never the server's capacity.
func TestCapacityBound(t *testing.T) {
	pass := report.CapacityStep{Stage: "ramp", Offered: 1000, Pass: true, RedisCPUPercent: 10, LockbenchCPUPercent: 10, LockbenchCores: 2}
	pass750 := pass
	pass750.Offered = 750
	fail := func(f func(*report.CapacityStep)) report.CapacityStep {
		st := report.CapacityStep{Stage: "ramp", Offered: 2000, Achieved: 1500, RedisCPUPercent: 40,
			LockbenchCPUPercent: 40, LockbenchCores: 2, HostCPUPercent: 50, HostCores: 2, RoundTripUS: 300, Keys: 100000, Reason: "p99 9ms > 5ms"}
		f(&st)
		return st
	}
	tests := []struct {
		name   string
		steps  []report.CapacityStep
		kind   string
		client bool
		says   string
	}{
		{"redis", []report.CapacityStep{pass, fail(func(s *report.CapacityStep) { s.RedisCPUPercent = 96 })},
			"redis-cpu", false, "Redis CPU 96% of a core at 2k/s"},
		// Redis saturated comes first: lockbench busy beside it does not make it the client's.
		{"redis and lockbench", []report.CapacityStep{pass, fail(func(s *report.CapacityStep) { s.RedisCPUPercent = 90; s.LockbenchCPUPercent = 99 })},
			"redis-cpu", false, "Redis CPU 90%"},
		{"lockbench, one core", []report.CapacityStep{pass, fail(func(s *report.CapacityStep) { s.LockbenchCPUPercent = 97; s.LockbenchCores = 1 })},
			"lockbench-cpu", true, "lockbench: 1.0 of 1 cores busy at 2k/s (Redis CPU 40%) — add --procs or machines"},
		{"machine shared with Redis", []report.CapacityStep{pass, fail(func(s *report.CapacityStep) {
			s.HostCPUPercent, s.LockbenchCPUPercent, s.RedisCPUPercent = 98, 60, 70
		})}, "host-cpu", true, "the machine: 2.0 of 2 cores busy at 2k/s (lockbench 1.2/2, Redis CPU 70%) — run lockbench on another machine than Redis"},
		{"machine busy with other work", []report.CapacityStep{pass, fail(func(s *report.CapacityStep) {
			s.HostCPUPercent, s.LockbenchCPUPercent, s.RedisCPUPercent = 98, 20, 10
		})}, "host-cpu", true, "2.0 of 2 cores busy at 2k/s, 1.5 of them other work (lockbench 0.4/2, Redis CPU 10%) — measure on a quiet machine"},
		// A VM whose host ran other guests on its cores: the steal is named, and the advice
		// is cores of its own rather than a quieter machine.
		{"machine's cores taken by the hypervisor", []report.CapacityStep{pass, fail(func(s *report.CapacityStep) {
			s.HostCPUPercent, s.HostStealPercent, s.LockbenchCPUPercent, s.RedisCPUPercent = 98, 40, 20, 10
		})}, "host-cpu", true, "1.5 of them other work, 0.8 the hypervisor's (steal) (lockbench 0.4/2, Redis CPU 10%) — the host ran other guests on this VM's cores: measure on dedicated cores"},
		{"machine shared with Redis, a little steal", []report.CapacityStep{pass, fail(func(s *report.CapacityStep) {
			s.HostCPUPercent, s.HostStealPercent, s.LockbenchCPUPercent, s.RedisCPUPercent = 98, 6, 60, 70
		})}, "host-cpu", true, "2.0 of 2 cores busy at 2k/s, 0.1 the hypervisor's (steal) (lockbench 1.2/2, Redis CPU 70%) — run lockbench on another machine than Redis"},
		// Not busy, but the hypervisor paused the machine's CPUs a fifth of the time: the
		// step's miss is the other guests', named before lockbench's delays (which steal
		// lengthens as well).
		{"machine paused by the hypervisor", []report.CapacityStep{pass, fail(func(s *report.CapacityStep) {
			s.HostCPUPercent, s.HostStealPercent, s.P99US, s.SchedP99US = 60, 22, 9000, 6200
		})}, "host-cpu", true, "the machine: the hypervisor took 0.4 of its 2 cores at 2k/s (steal 22%"},
		{"a little steal is not the bound", []report.CapacityStep{pass, fail(func(s *report.CapacityStep) { s.HostStealPercent = 4 })},
			"latency", false, "nothing saturated"},
		// GOMAXPROCS=1: its one core 0.4 busy, but its goroutines queued for it most of
		// the acquire p99: lockbench's limit, though no CPU figure shows it.
		{"lockbench's scheduler", []report.CapacityStep{pass, fail(func(s *report.CapacityStep) {
			s.LockbenchCPUPercent, s.LockbenchCores, s.P99US, s.SchedP99US = 40, 1, 9000, 6200
		})}, "lockbench-scheduling", true, "lockbench: its goroutines waited 6.2ms (p99) for one of its 1 cores to run on, 69% of acquire p99 9ms at 2k/s"},
		// GOMAXPROCS=1 again: its one core 0.2 busy and its goroutines hardly queued, but
		// they started late — timers run from an idle processor's millisecond epoll wait —
		// for a third of the acquire p99 (figures of a step at 875/s, this session).
		{"lockbench's start delay", []report.CapacityStep{pass750, fail(func(s *report.CapacityStep) {
			s.Offered, s.P99US, s.RedisCPUPercent, s.LockbenchCPUPercent, s.LockbenchCores, s.HostCPUPercent = 875, 9375, 12, 24, 1, 40
			s.RoundTripUS, s.SchedP99US, s.StartDelayP99US = 195, 131, 3103
		})}, "lockbench-scheduling", true, "lockbench: its goroutines started 3.1ms late (p99: a probe that sleeps until a due instant, as an arrival does), 33% of acquire p99 9.38ms at 875/s (lockbench 0.2/1, Redis CPU 12%, round trip 195µs, its goroutines' scheduling p99 131µs) — give it more cores"},
		// A start delay under a quarter of the p99, but more than the step missed its
		// objective by: lockbench's own delay is as large as the miss.
		{"start delay covers the miss", []report.CapacityStep{pass, fail(func(s *report.CapacityStep) {
			s.P99US, s.StartDelayP99US, s.LockbenchCPUPercent, s.LockbenchCores = 5200, 1100, 10, 1
		})}, "lockbench-scheduling", true, "started 1.1ms late (p99: a probe that sleeps until a due instant, as an arrival does), more than acquire p99 5.2ms missed 5ms by, with Redis under 50% of a core at 2k/s"},
		// The same beside a Redis at 80% of a core: its queue may make the miss.
		{"start delay covers the miss, Redis busy", []report.CapacityStep{pass, fail(func(s *report.CapacityStep) {
			s.P99US, s.StartDelayP99US, s.LockbenchCPUPercent, s.LockbenchCores, s.RedisCPUPercent = 5200, 1100, 10, 1, 80
		})}, "latency", false, "nothing saturated at 2k/s (Redis CPU 80%"},
		// A start delay small against the p99 and the miss is not what broke it.
		{"start delay small", []report.CapacityStep{pass, fail(func(s *report.CapacityStep) { s.P99US, s.StartDelayP99US = 9000, 1000 })},
			"latency", false, "nothing saturated at 2k/s (Redis CPU 40%, lockbench 0.8/2, round trip 300µs, lockbench's start delay p99 1ms)"},
		// The same delay on a machine busy with other work is the machine's.
		{"machine before start delay", []report.CapacityStep{pass750, fail(func(s *report.CapacityStep) {
			s.Offered, s.P99US, s.RedisCPUPercent, s.LockbenchCPUPercent, s.LockbenchCores, s.HostCPUPercent = 875, 9375, 12, 24, 1, 100
			s.SchedP99US, s.StartDelayP99US = 131, 3103
		})}, "host-cpu", true, "1.6 of them other work"},
		// And a saturated Redis first: then the client's delay is the server's queue's.
		{"redis before start delay", []report.CapacityStep{pass, fail(func(s *report.CapacityStep) { s.RedisCPUPercent, s.P99US, s.StartDelayP99US = 95, 9000, 8000 })},
			"redis-cpu", false, "Redis CPU 95% of a core"},
		// A --procs fleet of two children with two Ps each on a machine of two cores: 1.8
		// cores busy is 44% of its Ps but all the machine can give it.
		{"fleet with more Ps than cores", []report.CapacityStep{pass, fail(func(s *report.CapacityStep) { s.LockbenchCPUPercent, s.LockbenchCores, s.HostCPUPercent = 44, 4, 80 })},
			"lockbench-cpu", true, "lockbench: 1.8 of the machine's 2 cores (4 Ps across its processes) busy at 2k/s"},
		// The scheduler comes after the machine: a machine busy with other work delays
		// lockbench's threads, and its goroutines queue behind them.
		{"machine before scheduler", []report.CapacityStep{pass, fail(func(s *report.CapacityStep) {
			s.HostCPUPercent, s.LockbenchCPUPercent, s.RedisCPUPercent, s.P99US, s.SchedP99US = 98, 20, 10, 9000, 8000
		})}, "host-cpu", true, "other work"},
		// A scheduler wait that is a small share of the p99 is not what broke it.
		{"scheduler small", []report.CapacityStep{pass, fail(func(s *report.CapacityStep) { s.P99US, s.SchedP99US = 9000, 300 })},
			"latency", false, "nothing saturated"},
		{"workers", []report.CapacityStep{pass, fail(func(s *report.CapacityStep) { s.Dropped = 500 })},
			"workers", true, "500 arrivals found every worker busy"},
		{"contention", []report.CapacityStep{pass, fail(func(s *report.CapacityStep) { s.HandoffRatio = 0.9; s.Keys = 1 })},
			"contention", false, "contention on 1 keys: 90% of acquires waited"},
		{"latency", []report.CapacityStep{pass, fail(func(s *report.CapacityStep) {})},
			"latency", false, "nothing saturated at 2k/s (Redis CPU 40%, lockbench 0.8/2, round trip 300µs)"},
		{"none failed", []report.CapacityStep{pass}, "none", false, "every offered rate up to 1k/s met the SLO"},
		// A failing step below the answer (the ramp coming down) is not what bound it.
		{"lowest failing above the answer", []report.CapacityStep{
			fail(func(s *report.CapacityStep) { s.Offered = 4000; s.RedisCPUPercent = 99 }),
			fail(func(s *report.CapacityStep) { s.Offered = 500; s.LockbenchCPUPercent = 99 }),
			pass,
			fail(func(s *report.CapacityStep) { s.Offered = 3000; s.LockbenchCPUPercent = 99 }),
		}, "lockbench-cpu", true, "at 3k/s"},
	}
	for _, tt := range tests {
		c := report.Capacity{Strategy: "token", Steps: tt.steps}
		for _, st := range tt.steps {
			if st.Pass && st.Offered > c.MaxRate {
				c.MaxRate = st.Offered
			}
		}
		kind, by, client := bound(c, 3*time.Second, 5*time.Millisecond)
		if kind != tt.kind || client != tt.client || !strings.Contains(by, tt.says) {
			t.Errorf("%s: bound = %q, %q, client %v; want %q, client %v, saying %q", tt.name, kind, by, client, tt.kind, tt.client, tt.says)
		}
	}
}

// judge carries each step's figures into the step: both sides' CPU, the round trip and the
// keys' contention.
func TestJudgeCarriesBothSides(t *testing.T) {
	r := report.Result{OfferedRate: 1000, AcquireRate: 1000, Acquired: 3000, DurationS: 3, Keys: 16,
		Redis:  report.RedisCost{CPUPercent: 55},
		Client: report.ClientCost{Measured: true, CPUPercent: 75, Cores: 2, HostCPUPercent: 80, HostCores: 2, HostStealPercent: 12}}
	r.LatencyUS.Release.P50 = 120
	r.LatencyUS.Handoff.Count = 1500
	r.Client.SchedP99US, r.Client.SchedMeanUS, r.Client.StartDelayP99US = 900, 70, 1500
	st := SLO{P99: time.Second, TimeoutRate: 0.001}.judge("ramp", r)
	if st.RedisCPUPercent != 55 || st.LockbenchCPUPercent != 75 || st.LockbenchCores != 2 || st.HostCPUPercent != 80 || st.HostCores != 2 || st.HostStealPercent != 12 ||
		st.RoundTripUS != 120 || st.HandoffRatio != 0.5 || st.Keys != 16 || st.SchedP99US != 900 || st.SchedMeanUS != 70 || st.StartDelayP99US != 1500 {
		t.Errorf("step %+v", st)
	}
}

// A phase's result carries lockbench's own CPU over its window, beside Redis's: the
// process's CPU time, the cores it may use, and the machine's CPU where it can be read.
func TestResultCarriesClientCost(t *testing.T) {
	if _, ok := processCPU(); !ok {
		t.Skip("no process CPU time on this system")
	}
	_, c := redistest.Server(t)
	cfg := shortConfig()
	cfg.Workers, cfg.Duration = 8, time.Second
	cfg.Phases = []Phase{cfg.Phase("token")}
	results, err := Run(context.Background(), cfg, redisBackend(c), Options{})
	if err != nil {
		t.Fatal(err)
	}
	cc := results[0].Client
	if !cc.Measured || cc.CPUUS == 0 || cc.Cores != runtime.GOMAXPROCS(0) || cc.CPUPercent <= 0 || cc.CPUUSPerAcquire <= 0 {
		t.Errorf("client cost %+v: want lockbench's CPU over the window, GOMAXPROCS %d cores", cc, runtime.GOMAXPROCS(0))
	}
	if cc.StartDelayP99US != 0 {
		t.Errorf("client %+v: a closed loop has no due instants, so no start delay", cc)
	}
	if cc.SchedP99US <= 0 || cc.SchedMeanUS <= 0 {
		t.Errorf("client cost %+v: want the goroutines' scheduling latency over the window", cc)
	}
	if cc.HostCores == 0 || cc.HostCPUPercent <= 0 || cc.HostCPUPercent > 100 {
		t.Errorf("client cost %+v: want the machine's CPU in %% of its cores", cc)
	}
}
