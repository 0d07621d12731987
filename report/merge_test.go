package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// process is what one lockbench process of a multi-machine run measured for one phase: the
// raw samples, kept so that the test can compute the exact answer.
type process struct {
	acquire, release, handoff, hold []int64 // µs
	perWorker                       []uint64
}

// newProcess draws one process's samples: latencies from a heavy-tailed distribution whose
// scale differs per process (machines differ), per-worker counts that are uneven.
func newProcess(rng *rand.Rand, n int, scaleUS float64, workers int) process {
	draw := func(n int, scale float64) []int64 {
		v := make([]int64, n)
		for i := range v {
			x := scale * rng.ExpFloat64()
			if rng.IntN(100) == 0 { // 1% stalls: the tail a merge must not smooth away
				x *= 200
			}
			v[i] = int64(x) + 1
		}
		return v
	}
	p := process{
		acquire: draw(n, scaleUS), release: draw(n, scaleUS/3),
		handoff: draw(n-n/10, scaleUS*2), hold: draw(n, 2000),
		perWorker: make([]uint64, workers),
	}
	for i := 0; i < n; i++ {
		p.perWorker[rng.IntN(workers)*rng.IntN(2)]++ // worker 0 gets about half: unfair
	}
	return p
}

// recordAll records values into a new histogram, as the engine's shards do.
func recordAll(t *testing.T, values ...[]int64) *hdrhistogram.Histogram {
	t.Helper()
	h := NewHistogram()
	for _, vs := range values {
		for _, v := range vs {
			if err := h.RecordValue(v); err != nil {
				t.Fatal(err)
			}
		}
	}
	return h
}

// engineResult builds the Result of one process for p exactly the way the engine does
// (workload/engine.go: PercentilesOf and EncodeHistogram of the phase's histograms; the
// recorder's fairness sums).
func engineResult(t *testing.T, p process, durationS float64, node int) Result {
	t.Helper()
	acquire, release := recordAll(t, p.acquire), recordAll(t, p.release)
	handoff, hold := recordAll(t, p.handoff), recordAll(t, p.hold)
	r := Result{
		Strategy: "token", Wait: "pubsub", TTLMS: 10000, DurationS: durationS,
		Workers: len(p.perWorker), Keys: 16,
		Acquired: uint64(len(p.acquire)), AcquireRate: float64(len(p.acquire)) / durationS,
		Timeouts: uint64(node), Errors: 1, Dropped: 10 * uint64(node),
		LatencyUS: Latencies{
			Acquire: PercentilesOf(acquire), Release: PercentilesOf(release),
			Handoff: PercentilesOf(handoff), Hold: PercentilesOf(hold),
		},
		Safety:   Safety{LostLeases: uint64(node), StuckKeys: 1},
		Verdict:  "safe",
		Renewals: 100,
		Redis: RedisCost{
			Measured: true, Commands: 4_000_000 + uint64(node)*1000, CPUUS: 3_000_000,
			NetInBytes: 100_000_000, NetOutBytes: 50_000_000, CPUPercent: 30,
		},
		Fairness: fairnessOf(p.perWorker),
		Timeline: []Second{
			{TS: 1, Acquired: 100, P99US: int64(1000 * node)},
			{TS: 2, Acquired: 200, P99US: 500, Overlaps: 0},
		},
	}
	r.Histograms.Acquire = encoded(t, acquire)
	r.Histograms.Release = encoded(t, release)
	r.Histograms.Handoff = encoded(t, handoff)
	r.Histograms.Hold = encoded(t, hold)
	return r
}

// fairnessOf is the recorder's fairness computation.
func fairnessOf(perWorker []uint64) Fairness {
	f := Fairness{MinPerWorker: perWorker[0], Workers: len(perWorker)}
	for _, n := range perWorker {
		x := float64(n)
		f.Sum += x
		f.SumSquares += x * x
		f.MinPerWorker = min(f.MinPerWorker, n)
		f.MaxPerWorker = max(f.MaxPerWorker, n)
		if n == 0 {
			f.Starved++
		}
	}
	f.Jain = f.Sum * f.Sum / (float64(f.Workers) * f.SumSquares)
	return f
}

// viaJSON writes s with the JSON reporter and reads it back, as `report merge` reads files.
func viaJSON(t *testing.T, s *Summary) *Summary {
	t.Helper()
	var buf bytes.Buffer
	if err := JSON(&buf, s); err != nil {
		t.Fatal(err)
	}
	var back Summary
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	return &back
}

// nodeSummary is one process's Summary around results. The processes started 300ms apart,
// as processes started by hand on several machines that then meet at a barrier do.
func nodeSummary(node, of int, results ...Result) *Summary {
	return &Summary{
		Tool: "lockbench", Version: "v0.2.0",
		StartedAt: time.Date(2025, 3, 1, 10, 0, 0, node*int(300*time.Millisecond), time.UTC),
		Node:      strconv.Itoa(node) + "/" + strconv.Itoa(of),
		Target:    Target{Mode: "external", Topology: "single", Addrs: []string{"10.0.0.1:6379"}},
		Config:    Config{Strategies: []string{"token"}, Workers: 10, Keys: 16, DurationS: 10, Rate: 1000},
		Results:   results,
	}
}

// TestMergeHistogramsExact is the property `report merge` exists for: the merged acquire
// histogram is the histogram of every process's samples together, not an average of
// percentiles.
func TestMergeHistogramsExact(t *testing.T) {
	t.Parallel() // histograms are slow to build and encode under -race
	rng := rand.New(rand.NewPCG(1, 2))
	procs := []process{
		newProcess(rng, 20000, 300, 10),
		newProcess(rng, 5000, 2000, 7), // a slower, farther machine
		newProcess(rng, 12000, 800, 13),
	}
	durations := []float64{10.0, 10.2, 9.9}
	var inputs []*Summary
	for i, p := range procs {
		inputs = append(inputs, viaJSON(t, nodeSummary(i+1, 3, engineResult(t, p, durations[i], i+1))))
	}
	merged, err := Merge(inputs, MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if merged.Merged != 3 || merged.Node != "" || len(merged.Results) != 1 {
		t.Fatalf("merged: Merged=%d Node=%q %d results; want 3, \"\", 1", merged.Merged, merged.Node, len(merged.Results))
	}
	r := merged.Results[0]

	var all process
	for _, p := range procs {
		all.acquire = append(all.acquire, p.acquire...)
		all.handoff = append(all.handoff, p.handoff...)
		all.perWorker = append(all.perWorker, p.perWorker...)
	}
	want := recordAll(t, all.acquire)
	got, err := DecodeHistogram(r.Histograms.Acquire)
	if err != nil {
		t.Fatal(err)
	}
	if got.TotalCount() != want.TotalCount() || got.Max() != want.Max() {
		t.Errorf("merged acquire histogram: count %d max %d, want %d, %d", got.TotalCount(), got.Max(), want.TotalCount(), want.Max())
	}
	for _, q := range []float64{0, 1, 25, 50, 75, 90, 99, 99.5, 99.9, 99.99, 100} {
		if g, w := got.ValueAtPercentile(q), want.ValueAtPercentile(q); g != w {
			t.Errorf("merged acquire p%v = %d, want %d", q, g, w)
		}
	}
	if !got.Equals(want) {
		t.Errorf("merged acquire histogram differs from the histogram of all samples")
	}
	if r.LatencyUS.Acquire != PercentilesOf(want) {
		t.Errorf("acquire percentiles = %+v, want %+v (from the combined samples)", r.LatencyUS.Acquire, PercentilesOf(want))
	}
	if r.LatencyUS.Handoff != PercentilesOf(recordAll(t, all.handoff)) {
		t.Errorf("handoff percentiles = %+v, want those of the combined samples", r.LatencyUS.Handoff)
	}
	averaged := (inputs[0].Results[0].LatencyUS.Acquire.P99 + inputs[1].Results[0].LatencyUS.Acquire.P99 +
		inputs[2].Results[0].LatencyUS.Acquire.P99) / 3
	if r.LatencyUS.Acquire.P99 == averaged {
		t.Errorf("p99 %d equals the average of the inputs' p99s: percentiles were averaged", averaged)
	}

	// Counts add up; the rate is over the longest window.
	n := uint64(len(all.acquire))
	checks := []struct {
		name      string
		got, want float64
	}{
		{"acquired", float64(r.Acquired), float64(n)},
		{"acquire_rate", r.AcquireRate, float64(n) / 10.2},
		{"duration_s", r.DurationS, 10.2},
		{"workers", float64(r.Workers), 30},
		{"timeouts", float64(r.Timeouts), 1 + 2 + 3},
		{"errors", float64(r.Errors), 3},
		{"dropped", float64(r.Dropped), 60},
		{"lost_leases", float64(r.Safety.LostLeases), 6},
		{"stuck_keys", float64(r.Safety.StuckKeys), 3},
		{"renewals", float64(r.Renewals), 300},
		{"timeline[0].acquired", float64(r.Timeline[0].Acquired), 300},
		{"timeline[1].acquired", float64(r.Timeline[1].Acquired), 600},
		{"timeline[0].p99_us (highest)", float64(r.Timeline[0].P99US), 3000},
		{"config.workers", float64(merged.Config.Workers), 30},
		{"config.rate", merged.Config.Rate, 3000},
		// Redis: every process saw the same servers; the cost is their mean, per merged acquire.
		{"redis.commands", float64(r.Redis.Commands), 4_002_000},
		{"redis.commands_per_acquire", r.Redis.CommandsPerAcquire, 4_002_000 / float64(n)},
		{"redis.cpu_us_per_acquire", r.Redis.CPUUSPerAcquire, 3_000_000 / float64(n)},
		{"redis.bytes_per_acquire", r.Redis.BytesPerAcquire, 150_000_000 / float64(n)},
		{"redis.cpu_percent", r.Redis.CPUPercent, 30},
		// Jain over all 30 workers, exactly.
		{"fairness.jain", r.Fairness.Jain, fairnessOf(all.perWorker).Jain},
		{"fairness.workers", float64(r.Fairness.Workers), 30},
		{"fairness.min", float64(r.Fairness.MinPerWorker), float64(fairnessOf(all.perWorker).MinPerWorker)},
		{"fairness.max", float64(r.Fairness.MaxPerWorker), float64(fairnessOf(all.perWorker).MaxPerWorker)},
		{"fairness.starved", float64(r.Fairness.Starved), float64(fairnessOf(all.perWorker).Starved)},
	}
	for _, c := range checks {
		if math.Abs(c.got-c.want) > 1e-9*math.Max(1, math.Abs(c.want)) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if r.Verdict != "DEADLOCK: 3 keys stuck" {
		t.Errorf("verdict = %q, want the inputs' stuck keys summed into DEADLOCK: 3 keys stuck", r.Verdict)
	}
	if !merged.StartedAt.Equal(inputs[0].StartedAt) {
		t.Errorf("started_at = %v, want the earliest %v", merged.StartedAt, inputs[0].StartedAt)
	}
	if err := validateResult(jsonDoc(t, merged)); err != nil {
		t.Errorf("the merged result fails the contract: %v", err)
	}
}

// TestMergeMatchesByStrategyAndLabel: results are matched by (strategy, label), whatever
// their order in each file.
func TestMergeMatchesByStrategyAndLabel(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	phase := func(label string, node int) Result {
		r := engineResult(t, newProcess(rng, 1000, 500, 4), 10, node)
		r.Label = label
		r.Timeline = nil
		return r
	}
	a := nodeSummary(1, 2, phase("ttl=200ms", 1), phase("ttl=5s", 1))
	b := nodeSummary(2, 2, phase("ttl=5s", 2), phase("ttl=200ms", 2))
	merged, err := Merge([]*Summary{a, b}, MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i, label := range []string{"ttl=200ms", "ttl=5s"} {
		r := merged.Results[i]
		if r.Label != label {
			t.Fatalf("result %d label = %q, want %q (A's order)", i, r.Label, label)
		}
		var want uint64
		for _, s := range []*Summary{a, b} {
			for _, in := range s.Results {
				if in.Label == label {
					want += in.Acquired
				}
			}
		}
		if r.Acquired != want {
			t.Errorf("%s acquired = %d, want %d", label, r.Acquired, want)
		}
	}
	if a.Results[0].Acquired == merged.Results[0].Acquired {
		t.Errorf("Merge modified or aliased its input")
	}
}

// TestMergeVerdict: the merged verdict is judged again from the summed counts, so one
// unsafe input makes the whole run unsafe and fenced overlaps stay fenced only while no
// input let a stale write through.
func TestMergeVerdict(t *testing.T) {
	tests := []struct {
		name   string
		safety []Safety
		want   string
	}{
		{"all safe", []Safety{{}, {}}, "safe"},
		{"all fenced", []Safety{{Overlaps: 4, StaleFences: 4, Fencing: true}, {Overlaps: 1, StaleFences: 1, Fencing: true}}, "safe (fenced)"},
		{"one unsafe", []Safety{{}, {Overlaps: 3, StaleWrites: 3}}, "UNSAFE: 3 overlaps"},
		{"both unsafe: counts add", []Safety{{Overlaps: 2}, {Overlaps: 3}}, "UNSAFE: 5 overlaps"},
		{"fenced and a stale write", []Safety{{Overlaps: 7, StaleFences: 7, Fencing: true}, {Overlaps: 1, StaleWrites: 1, Fencing: true}},
			"UNSAFE: 8 overlaps, 1 stale write accepted"},
		{"a regression in one", []Safety{{Overlaps: 2, StaleFences: 2, Fencing: true}, {FenceRegressions: 5, Fencing: true}}, "UNSAFE: 5 fence regressions"},
		{"stuck keys in one", []Safety{{}, {StuckKeys: 4}}, "DEADLOCK: 4 keys stuck"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ss []*Summary
			for i, sf := range tt.safety {
				ss = append(ss, nodeSummary(i+1, len(tt.safety), Result{Strategy: "token", Verdict: "x", Acquired: 10, Safety: sf}))
			}
			merged, err := Merge(ss, MergeOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got := merged.Results[0].Verdict; got != tt.want {
				t.Errorf("verdict = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestMergeEventsAndNotes: events are merged once each in time order; interrupted and
// errors carry over.
func TestMergeEventsAndNotes(t *testing.T) {
	a := nodeSummary(1, 2, Result{Strategy: "token", Verdict: "safe",
		Events: []Event{{TS: 3, Fault: "pause", What: "node 1 paused"}, {TS: 1, Fault: "kill", What: "node 2 killed"}}})
	b := nodeSummary(2, 2, Result{Strategy: "token", Verdict: "safe", Error: "connection refused", Interrupted: true,
		Events: []Event{{TS: 1, Fault: "kill", What: "node 2 killed"}}})
	b.Interrupted = true
	merged, err := Merge([]*Summary{a, b}, MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r := merged.Results[0]
	if len(r.Events) != 2 || r.Events[0].TS != 1 || r.Events[1].TS != 3 {
		t.Errorf("events = %+v, want the kill at 1s then the pause at 3s, once each", r.Events)
	}
	if !merged.Interrupted || !r.Interrupted || !strings.Contains(r.Error, "input 2: connection refused") {
		t.Errorf("interrupted %v/%v error %q: want both interrupted and input 2's error", merged.Interrupted, r.Interrupted, r.Error)
	}
}

func TestMergeRejects(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	// Two processes' results, built once (each build records and encodes four histograms);
	// token() hands them out in turn, so that two inputs never hold the same numbers.
	tokens := [2]Result{engineResult(t, newProcess(rng, 100, 500, 2), 10, 1), engineResult(t, newProcess(rng, 100, 500, 2), 10, 1)}
	calls := 0
	token := func() Result { calls++; return tokens[calls%2] }
	tests := []struct {
		name string
		ss   func() []*Summary
		want string
	}{
		{"nothing", func() []*Summary { return nil }, "no results"},
		{"capacity", func() []*Summary {
			c := capacitySummary()
			return []*Summary{nodeSummary(1, 2, token()), c}
		}, "input 2 is a capacity search"},
		{"different strategies", func() []*Summary {
			other := token()
			other.Strategy = "fenced"
			return []*Summary{nodeSummary(1, 2, token()), nodeSummary(2, 2, other)}
		}, "only input 1 has token"},
		{"extra result", func() []*Summary {
			other := token()
			other.Label = "wd=auto"
			return []*Summary{nodeSummary(1, 2, token()), nodeSummary(2, 2, token(), other)}
		}, "input 1 lacks token wd=auto"},
		{"different ttl", func() []*Summary {
			other := token()
			other.TTLMS = 500
			return []*Summary{nodeSummary(1, 2, token()), nodeSummary(2, 2, other)}
		}, "ttl 10s vs 500ms"},
		{"same node twice", func() []*Summary {
			return []*Summary{nodeSummary(1, 2, token()), nodeSummary(1, 2, token())}
		}, "both node 1/2"},
		{"sweep and run", func() []*Summary {
			s := nodeSummary(2, 2, token())
			s.Kind = KindSweep
			return []*Summary{nodeSummary(1, 2, token()), s}
		}, "input 2 is a sweep, input 1 a run"},
		{"no histograms", func() []*Summary {
			old := token()
			old.Histograms = Histograms{}
			return []*Summary{nodeSummary(1, 2, token()), nodeSummary(2, 2, old)}
		}, "no histogram to merge"},
		{"no fairness sums", func() []*Summary {
			old := token()
			old.Fairness = Fairness{Jain: 0.9}
			return []*Summary{nodeSummary(1, 2, token()), nodeSummary(2, 2, old)}
		}, "no per-worker sums"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Merge(tt.ss(), MergeOptions{Force: true})
			if err == nil {
				t.Fatal("Merge succeeded")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not say %q", err, tt.want)
			}
			// Inputs that ran different phases are the user's mistake, and force cannot
			// match them; histograms that cannot be merged are a broken input.
			var me *MergeError
			if isRefusal := errors.As(err, &me); isRefusal != (tt.name != "no histograms" && tt.name != "no fairness sums") || isRefusal && me.Forcible {
				t.Errorf("error %#v: want a MergeError that --force does not override, for inputs that ran different phases", err)
			}
		})
	}
}

// TestMergeRefusesOtherTargets: the inputs of one run ran against one Redis, given by the
// same addresses. Another mode, topology, address or server is refused, naming the input
// and how it differs, unless forced; a forced merge notes what differed.
func TestMergeRefusesOtherTargets(t *testing.T) {
	t.Parallel() // histograms are slow to build and encode under -race
	rng := rand.New(rand.NewPCG(9, 10))
	var results [3]Result // one per process; every case differs only in the target
	for i := range results {
		results[i] = engineResult(t, newProcess(rng, 100, 500, 2), 10, i+1)
	}
	base := Target{Mode: "external", Topology: "redlock", Addrs: []string{"10.0.0.1:6379", "10.0.0.2:6379", "10.0.0.3:6379"}, RedisVersion: "7.2.4"}
	tests := []struct {
		name   string
		change func(*Target)
		want   string // "" = mergeable
	}{
		{"same", func(*Target) {}, ""},
		{"addresses in another order", func(t *Target) { t.Addrs = []string{"10.0.0.3:6379", "10.0.0.1:6379", "10.0.0.2:6379"} }, ""},
		{"version unknown", func(t *Target) { t.RedisVersion = "" }, ""},
		{"another mode", func(t *Target) { t.Mode = "spawned" }, "input 3 ran against another target than input 1: mode spawned, input 1 external"},
		{"another topology", func(t *Target) { t.Topology = "cluster" }, "topology cluster, input 1 redlock"},
		{"another address", func(t *Target) { t.Addrs[2] = "10.0.0.4:6379" },
			"addresses 10.0.0.1:6379,10.0.0.2:6379,10.0.0.4:6379, input 1 10.0.0.1:6379,10.0.0.2:6379,10.0.0.3:6379"},
		{"one address fewer", func(t *Target) { t.Addrs = t.Addrs[:2] }, "addresses 10.0.0.1:6379,10.0.0.2:6379, input 1"},
		// The same loopback address on two machines: two servers.
		{"another server at the same addresses", func(t *Target) { t.RedisVersion = "7.0.15" }, "Redis 7.0.15, input 1 Redis 7.2.4 at the same addresses"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ss []*Summary
			for node := 1; node <= 3; node++ {
				s := nodeSummary(node, 3, results[node-1])
				s.Target = base
				s.Target.Addrs = slices.Clone(base.Addrs)
				if node == 3 {
					tt.change(&s.Target)
				}
				ss = append(ss, s)
			}
			_, err := Merge(ss, MergeOptions{})
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Merge: %v", err)
				}
				return
			}
			var me *MergeError
			if !errors.As(err, &me) || !me.Forcible || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "--force") {
				t.Fatalf("Merge error %v: want a forcible MergeError saying %q and naming --force", err, tt.want)
			}
			merged, err := Merge(ss, MergeOptions{Force: true})
			if err != nil {
				t.Fatalf("forced: %v", err)
			}
			if !slices.ContainsFunc(merged.Notes, func(n string) bool { return strings.Contains(n, "by force") && strings.Contains(n, tt.want) }) {
				t.Errorf("forced merge notes %q: want one saying what differed (%q)", merged.Notes, tt.want)
			}
			if merged.Results[0].Acquired != ss[0].Results[0].Acquired+ss[1].Results[0].Acquired+ss[2].Results[0].Acquired {
				t.Errorf("forced merge did not add the counts up")
			}
		})
	}
}

// TestMergeRefusesRunsApart: processes that met at a barrier ran at the same time, so
// their run windows (started_at plus warm-ups and measured durations) overlap — even when
// they were started one after another, each within the others' window. An input that ran
// before or after the others is refused, naming it, unless forced.
func TestMergeRefusesRunsApart(t *testing.T) {
	t.Parallel() // histograms are slow to build and encode under -race
	rng := rand.New(rand.NewPCG(11, 12))
	var results [3]Result // one per process, 10 s each; the cases differ in when they started
	for i := range results {
		results[i] = engineResult(t, newProcess(rng, 100, 500, 2), 10, i+1)
	}
	at := func(node int, start time.Time) *Summary {
		s := nodeSummary(node, 3, results[node-1])
		s.StartedAt = start
		s.Config.WarmupS = 1
		return s
	}
	t0 := time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		ss   []*Summary
		want string // "" = mergeable
	}{
		{"together", []*Summary{at(1, t0), at(2, t0.Add(2*time.Second)), at(3, t0.Add(time.Second))}, ""},
		// Each started within the previous one's window: they waited for the last at the barrier.
		{"started one after another", []*Summary{at(1, t0), at(2, t0.Add(9*time.Second)), at(3, t0.Add(18*time.Second))}, ""},
		{"unknown start", []*Summary{at(1, t0), at(2, time.Time{}), at(3, t0)}, ""},
		{"clocks a little apart", []*Summary{at(1, t0), at(2, t0.Add(11500*time.Millisecond)), at(3, t0)}, ""},
		{"one an hour later", []*Summary{at(1, t0), at(2, t0.Add(time.Hour)), at(3, t0)},
			"input 2 started at 2025-03-01T11:00:00Z, 59m49s after input 1's run had ended (started 2025-03-01T10:00:00Z, 11s of warm-up and measurement)"},
		{"one the day before", []*Summary{at(1, t0), at(2, t0), at(3, t0.Add(-24*time.Hour))},
			"input 1 started at 2025-03-01T10:00:00Z, 23h59m49s after input 3's run had ended"},
		// Two pairs, each run together, but not with the other pair.
		{"two runs", []*Summary{at(1, t0), at(2, t0.Add(5*time.Minute)), at(3, t0.Add(time.Second))},
			"input 2 started at 2025-03-01T10:05:00Z, 4m48s after input 3's run had ended"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Merge(tt.ss, MergeOptions{})
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Merge: %v", err)
				}
				return
			}
			var me *MergeError
			if !errors.As(err, &me) || !me.Forcible || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "--force") {
				t.Fatalf("Merge error %v: want a forcible MergeError saying %q and naming --force", err, tt.want)
			}
			merged, err := Merge(tt.ss, MergeOptions{Force: true})
			if err != nil {
				t.Fatalf("forced: %v", err)
			}
			if !slices.ContainsFunc(merged.Notes, func(n string) bool {
				return strings.Contains(n, "by force") && strings.Contains(n, "did not run together")
			}) {
				t.Errorf("forced merge notes %q: want one saying the inputs did not run together", merged.Notes)
			}
		})
	}
}

// TestMergeOne: merging a single file is that file's numbers, marked merged.
func TestMergeOne(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	in := nodeSummary(1, 1, engineResult(t, newProcess(rng, 500, 500, 3), 10, 1))
	merged, err := Merge([]*Summary{in}, MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r, w := merged.Results[0], in.Results[0]
	if r.LatencyUS != w.LatencyUS || r.Acquired != w.Acquired || r.Fairness != w.Fairness || r.Histograms != w.Histograms {
		t.Errorf("a merge of one changed its numbers:\n%+v\nwant\n%+v", r, w)
	}
}

// TestMergeIntervals: the per-second histograms merge second by second (through the JSON,
// as `report merge` reads them): counts add up per tag, a merged second spans the inputs'
// seconds, and the timeline's p99 is the merged second's, not the larger of the two.
func TestMergeIntervals(t *testing.T) {
	t.Parallel() // histograms are slow to build and encode under -race
	rng := rand.New(rand.NewPCG(7, 8))
	var inputs []*Summary
	var secondValues [2][]int64 // acquire µs of each second, over both processes
	for node := 1; node <= 2; node++ {
		p := newProcess(rng, 2000, float64(300*node), 5)
		r := engineResult(t, p, 2, node)
		base := time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC).UnixMilli() + int64(node)*7 // clocks apart by ms
		for sec := range 2 {
			part := p.acquire[sec*1000 : (sec+1)*1000]
			secondValues[sec] = append(secondValues[sec], part...)
			iv := Interval{StartMS: base + int64(sec)*1000, EndMS: base + int64(sec+1)*1000,
				Acquire: encoded(t, recordAll(t, part)), Hold: encoded(t, recordAll(t, p.hold[sec*1000:(sec+1)*1000]))}
			r.Intervals = append(r.Intervals, iv)
		}
		inputs = append(inputs, viaJSON(t, nodeSummary(node, 2, r)))
	}
	merged, err := Merge(inputs, MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r := merged.Results[0]
	if len(r.Intervals) != 2 {
		t.Fatalf("%d merged seconds, want 2", len(r.Intervals))
	}
	for sec, iv := range r.Intervals {
		for tag, enc := range map[string]string{"acquire": iv.Acquire, "hold": iv.Hold} {
			h, err := DecodeHistogram(enc)
			if err != nil || h.TotalCount() != 2000 {
				t.Errorf("second %d %s: %d values (%v), want 2000", sec, tag, h.TotalCount(), err)
			}
		}
		if iv.Release != "" || iv.Handoff != "" {
			t.Errorf("second %d: tags no input recorded are not empty: %+v", sec, iv)
		}
		if first, second := inputs[0].Results[0].Intervals[sec], inputs[1].Results[0].Intervals[sec]; iv.StartMS != first.StartMS || iv.EndMS != second.EndMS {
			t.Errorf("second %d spans %d..%d, want %d..%d", sec, iv.StartMS, iv.EndMS, first.StartMS, second.EndMS)
		}
		want := recordAll(t, secondValues[sec]).ValueAtQuantile(99)
		if got := r.Timeline[sec].P99US; got != want {
			t.Errorf("timeline second %d p99 = %d, want the merged second's %d", sec, got, want)
		}
	}
	if err := validateResult(jsonDoc(t, merged)); err != nil {
		t.Errorf("the merged result fails the schema: %v", err)
	}
	// The merged log has every tag of every second.
	dir := t.TempDir()
	paths, err := WriteHDRFiles(dir, merged)
	if err != nil {
		t.Fatal(err)
	}
	checkHLOG(t, paths[1], &merged.Results[0])
}

// TestMergeRefusesTheSameProcessTwice: `report merge a.json a.json` would count every acquire
// twice. It is refused for files without --node as it is for files with one: the same start
// as the same node (or none), or the same content.
func TestMergeRefusesTheSameProcessTwice(t *testing.T) {
	plain := func(start time.Time) *Summary {
		s := nodeSummary(1, 1, Result{Strategy: "token", Verdict: "safe", Workers: 10, Acquired: 100})
		s.Node, s.StartedAt = "", start
		return s
	}
	t0 := time.Date(2025, 3, 1, 10, 0, 0, 123456789, time.UTC)
	tests := []struct {
		name string
		ss   []*Summary
		want string // "" = mergeable
	}{
		{"a run without --node, twice", []*Summary{plain(t0), plain(t0)}, "inputs 1 and 2 are the same process's result (started 2025-03-01T10:00:00.123456789Z)"},
		{"twice among others", []*Summary{plain(t0), plain(t0.Add(time.Millisecond)), viaJSON(t, plain(t0))}, "inputs 1 and 3 are the same process's result"},
		{"no start time, same content", []*Summary{plain(time.Time{}), plain(time.Time{})}, "inputs 1 and 2 are the same process's result (identical content)"},
		{"a merged result, twice", func() []*Summary {
			m, err := Merge([]*Summary{plain(t0), plain(t0.Add(time.Millisecond))}, MergeOptions{})
			if err != nil {
				t.Fatal(err)
			}
			return []*Summary{m, viaJSON(t, m)}
		}(), "the same process's result (a merge of 2 files"},
		{"with --node, twice", func() []*Summary {
			s := nodeSummary(1, 2, Result{Strategy: "token", Verdict: "safe", Workers: 10, Acquired: 100})
			return []*Summary{s, viaJSON(t, s)}
		}(), "both node 1/2"},
		{"two processes without --node", []*Summary{plain(t0), plain(t0.Add(time.Nanosecond))}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			merged, err := Merge(tt.ss, MergeOptions{Force: true})
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Merge: %v", err)
				}
				if merged.Results[0].Acquired != 200 {
					t.Errorf("acquired %d, want 200", merged.Results[0].Acquired)
				}
				return
			}
			var me *MergeError
			if !errors.As(err, &me) || me.Forcible || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Merge: %v; want a MergeError that --force cannot override, saying %q", err, tt.want)
			}
		})
	}
}
