package report

import "time"

// testSummary is a hand-written run of three strategies: token is healthy, set-nx-del let
// two holders in (overlaps, verdict UNSAFE) and redlock lost a node to a fault mid-phase
// (Error, events, no handoffs, no cost, no verdict).
func testSummary() *Summary {
	return &Summary{
		Tool:      "lockbench",
		Version:   "v0.1.0",
		StartedAt: time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC),
		Target: Target{
			Mode:         "spawned",
			Topology:     "single",
			Addrs:        []string{"127.0.0.1:40001"},
			RedisVersion: "7.0.15",
		},
		Config: Config{
			Strategies:       []string{"token", "set-nx-del", "redlock"},
			Workers:          100,
			Keys:             16,
			KeyDist:          "zipf:1.1",
			Hold:             "exp:2ms",
			DurationS:        10,
			WarmupS:          2,
			AcquireTimeoutMS: 5000,
			TTLMS:            10000,
			Watchdog:         "off",
			Wait:             "pubsub",
		},
		Results: []Result{
			{
				Strategy: "token", Wait: "pubsub", TTLMS: 10000, DurationS: 10, Workers: 100, Keys: 16,
				Acquired: 123456, AcquireRate: 12345.6, Timeouts: 0,
				LatencyUS: Latencies{
					Acquire: Percentiles{Count: 123456, P50: 85, P90: 410, P99: 1240, P999: 8830, Max: 31200, Mean: 190.5},
					Release: Percentiles{Count: 123456, P50: 61, P90: 90, P99: 180, P999: 950, Max: 4100, Mean: 70.2},
					Handoff: Percentiles{Count: 120000, P50: 140, P90: 620, P99: 2310, P999: 9100, Max: 33000, Mean: 260},
					Hold:    Percentiles{Count: 123456, P50: 1390, P90: 4610, P99: 9220, P999: 13800, Max: 21000, Mean: 2000},
				},
				Redis:    RedisCost{Measured: true, CommandsPerAcquire: 4.02, CPUUSPerAcquire: 3.25, BytesPerAcquire: 212.5},
				Verdict:  "safe",
				Fairness: Fairness{Jain: 0.991, MinPerWorker: 1100, MaxPerWorker: 1360},
				Timeline: []Second{{TS: 1, Acquired: 12001, P99US: 1250}, {TS: 2, Acquired: 12380, P99US: 1190}},
			},
			{
				Strategy: "set-nx-del", Wait: "pubsub", TTLMS: 10000, DurationS: 10, Workers: 100, Keys: 16,
				Acquired: 98765, AcquireRate: 9876.5, Timeouts: 1234, Errors: 2,
				LatencyUS: Latencies{
					Acquire: Percentiles{Count: 98765, P50: 120, P90: 900, P99: 5600, P999: 250000, Max: 3100000, Mean: 480},
					Release: Percentiles{Count: 98765, P50: 40, P90: 70, P99: 150, P999: 800, Max: 2000, Mean: 50},
					Handoff: Percentiles{Count: 90000, P50: 210, P90: 1500, P99: 7400, P999: 20000, Max: 40000, Mean: 600},
					Hold:    Percentiles{Count: 98765, P50: 1400, P90: 4600, P99: 9200, P999: 14000, Max: 11000000, Mean: 2100},
				},
				Safety:   Safety{Overlaps: 3, LostLeases: 5},
				Verdict:  "UNSAFE: 3 overlaps",
				Redis:    RedisCost{Measured: true, CommandsPerAcquire: 3.1, CPUUSPerAcquire: 2.1, BytesPerAcquire: 150},
				Fairness: Fairness{Jain: 0.874},
				Renewals: 0,
				Timeline: []Second{{TS: 1, Acquired: 9800, P99US: 5500, Overlaps: 1}},
			},
			{
				Strategy: "redlock", Wait: "pubsub", TTLMS: 10000, DurationS: 3.2, Workers: 100, Keys: 16,
				Acquired: 40, AcquireRate: 12.5, Timeouts: 0, Errors: 17,
				LatencyUS: Latencies{
					Acquire: Percentiles{Count: 40, P50: 2100, P90: 4000, P99: 9000, P999: 9000, Max: 9000, Mean: 2500},
					Release: Percentiles{Count: 40, P50: 900, P90: 1000, P99: 1200, P999: 1200, Max: 1200, Mean: 950},
					Hold:    Percentiles{Count: 40, P50: 1400, P90: 4600, P99: 9200, P999: 9200, Max: 9200, Mean: 2000},
				},
				Faults: []string{"node-kill:2@3s"},
				Events: []Event{{TS: 3, Fault: "node-kill:2@3s", What: "node 2 killed"}},
				Error:  "dial tcp 127.0.0.1:40003: connect: connection refused",
			},
		},
		Notes: []string{"Redis runs on this machine: latencies exclude a real network"},
	}
}

// sweepSummary is an interrupted open-loop TTL sweep of one strategy against five nodes: two
// results share the name fenced and differ in ttl and watchdog; the run has a fault and a
// profile.
func sweepSummary() *Summary {
	s := testSummary()
	s.Interrupted = true
	s.Notes = nil
	s.Target = Target{
		Mode:         "external",
		Topology:     "redlock",
		Addrs:        []string{"10.0.0.1:6379", "10.0.0.2:6379", "10.0.0.3:6379", "10.0.0.4:6379", "10.0.0.5:6379"},
		RedisVersion: "7.2.4",
	}
	s.Config.Strategies = []string{"fenced"}
	s.Config.Rate = 5000
	s.Config.MaxInflight = 200
	s.Config.Keys = 1
	s.Config.KeyDist = ""
	s.Config.WarmupS = 0
	s.Config.Watchdog = "auto"
	s.Config.Faults = []string{"pause:redis@3s+2s"}
	s.Config.Profile = "gc-pause"
	short, long := s.Results[0], s.Results[0]
	short.Strategy, long.Strategy = "fenced", "fenced"
	short.Keys, long.Keys = 1, 1
	short.TTLMS, short.WatchdogMS = 500, 166
	short.Safety.Overlaps = 12
	short.Safety.StaleFences = 2
	short.Safety.StuckKeys = 1
	short.Verdict = "UNSAFE: 12 overlaps"
	long.Verdict = "safe (fenced)"
	short.Dropped = 321
	long.TTLMS, long.WatchdogMS = 30000, 10000
	s.Results = []Result{short, long}
	return s
}

// kindSweepSummary is a ttl sweep (Kind "sweep") of token and fenced under holder pauses, as
// the engine lays it out: values outer, strategies inner, each phase labeled, with
// recommendations.
func kindSweepSummary() *Summary {
	s := testSummary()
	s.Kind = KindSweep
	s.Notes = nil
	s.Config.Strategies = []string{"token", "fenced"}
	s.Config.Faults = []string{"holder-pause:p=0.05,d=600ms"}
	s.Sweep = &Sweep{Param: "ttl", Values: []string{"200ms", "1s", "5s"}}
	base := s.Results[0]
	base.Faults = s.Config.Faults
	phase := func(strategy, ttl string, ttlMS int64, overlaps, stale uint64, verdict string) Result {
		r := base
		r.Strategy, r.Label, r.ParamValue, r.TTLMS = strategy, strategy+" ttl="+ttl, ttl, ttlMS
		r.Safety = Safety{Overlaps: overlaps, StaleFences: stale, LostLeases: overlaps}
		r.Verdict = verdict
		return r
	}
	s.Results = []Result{
		phase("token", "200ms", 200, 41, 0, "UNSAFE: 41 overlaps"),
		phase("fenced", "200ms", 200, 0, 39, "safe (fenced)"),
		phase("token", "1s", 1000, 2, 0, "UNSAFE: 2 overlaps"),
		phase("fenced", "1s", 1000, 0, 2, "safe (fenced)"),
		phase("token", "5s", 5000, 0, 0, "safe"),
		phase("fenced", "5s", 5000, 0, 0, "safe"),
	}
	s.Recommendations = []string{
		"token: ttl >= 5s (the smallest swept ttl without overlaps under 600ms holder pauses)",
		"fenced: safe at every swept ttl: the resource refused 41 stale writes",
	}
	return s
}

// capacitySummary is a capacity search (Kind "capacity") of token, which found its maximum
// by ramping and bisecting, and of redlock, whose first step already failed.
func capacitySummary() *Summary {
	s := testSummary()
	s.Kind = KindCapacity
	s.Notes = nil
	s.Results = nil
	s.Config.Strategies = []string{"token", "redlock"}
	s.Config.DurationS = 5
	const slo = "p99<=5ms timeouts<=0.1%"
	s.Capacity = []Capacity{
		{
			Strategy: "token", SLO: slo, MaxRate: 42100, CPUPercentAtMax: 87.2,
			Bound: "redis-cpu", BoundBy: "Redis CPU 92% of a core at 45k/s (lockbench 1.3/2)",
			Steps: []CapacityStep{
				{Stage: "ramp", Offered: 10000, Achieved: 9998.6, P99US: 1210, RedisCPUPercent: 21.5, LockbenchCPUPercent: 20, LockbenchCores: 2, RoundTripUS: 95, Pass: true},
				{Stage: "ramp", Offered: 20000, Achieved: 19990, P99US: 1480, RedisCPUPercent: 41.9, LockbenchCPUPercent: 38, LockbenchCores: 2, RoundTripUS: 110, Pass: true},
				{Stage: "ramp", Offered: 40000, Achieved: 39950, P99US: 2950, TimeoutRate: 0.0002, RedisCPUPercent: 83.1, LockbenchCPUPercent: 61, LockbenchCores: 2, RoundTripUS: 240, Pass: true},
				{Stage: "ramp", Offered: 80000, Achieved: 48800, Dropped: 155000, P99US: 61000, TimeoutRate: 0.031, RedisCPUPercent: 99.6, LockbenchCPUPercent: 70, LockbenchCores: 2, RoundTripUS: 3900,
					Reason: "achieved 61% of offered"},
				{Stage: "bisect", Offered: 60000, Achieved: 48100, Dropped: 59500, P99US: 7100, TimeoutRate: 0.004, RedisCPUPercent: 99.1, LockbenchCPUPercent: 69, LockbenchCores: 2, RoundTripUS: 1200,
					Reason: "p99 7.1ms > 5ms"},
				{Stage: "bisect", Offered: 50000, Achieved: 49200, Dropped: 4000, P99US: 5400, TimeoutRate: 0.0011, RedisCPUPercent: 97.8, LockbenchCPUPercent: 68, LockbenchCores: 2, RoundTripUS: 610,
					Reason: "p99 5.4ms > 5ms"},
				{Stage: "bisect", Offered: 45000, Achieved: 44950, P99US: 5100, TimeoutRate: 0.0004, RedisCPUPercent: 92.5, LockbenchCPUPercent: 66, LockbenchCores: 2, RoundTripUS: 480,
					Reason: "p99 5.1ms > 5ms"},
				{Stage: "bisect", Offered: 42100, Achieved: 42080, P99US: 3300, RedisCPUPercent: 87.2, LockbenchCPUPercent: 64, LockbenchCores: 2, RoundTripUS: 350, Pass: true},
			},
		},
		{
			Strategy: "redlock", SLO: slo, Bound: "lockbench-cpu", ClientBound: true,
			BoundBy: "lockbench: 1.9 of 2 cores busy at 10k/s (Redis CPU 31%) — add --procs or machines",
			Steps: []CapacityStep{
				{Stage: "ramp", Offered: 10000, Achieved: 3100, Dropped: 34500, P99US: 120000, TimeoutRate: 0.12, RedisCPUPercent: 31, LockbenchCPUPercent: 97, LockbenchCores: 2, RoundTripUS: 2100,
					Reason: "p99 120ms > 5ms"},
			},
		},
	}
	return s
}
