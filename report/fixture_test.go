package report

import "time"

// testSummary is a hand-written run of three strategies: token is healthy, set-nx-del let
// two holders in (overlaps) and redlock lost a node mid-phase (Error, no handoffs, no cost).
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
				Error: "dial tcp 127.0.0.1:40003: connect: connection refused",
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
	short.Dropped = 321
	long.TTLMS, long.WatchdogMS = 30000, 10000
	s.Results = []Result{short, long}
	return s
}
