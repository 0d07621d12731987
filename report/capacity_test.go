package report

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// Leaked permits are a deadlock, said as stuck keys are, beside them when both happened.
func TestJudgeLeakedPermits(t *testing.T) {
	for _, tt := range []struct {
		s    Safety
		want string
	}{
		{Safety{LeakedPermits: 2}, "DEADLOCK: 2 permits leaked"},
		{Safety{LeakedPermits: 1}, "DEADLOCK: 1 permit leaked"},
		{Safety{StuckKeys: 4, LeakedPermits: 2}, "DEADLOCK: 4 keys stuck, 2 permits leaked"},
		{Safety{Overlaps: 3, LeakedPermits: 2}, "UNSAFE: 3 overlaps; DEADLOCK: 2 permits leaked"},
		{Safety{MaxHolders: 3}, "safe"},
	} {
		if got := Judge(tt.s, 10); got != tt.want {
			t.Errorf("Judge(%+v) = %q, want %q", tt.s, got, tt.want)
		}
	}
}

// Merge sums the leaked permits, keeps the largest holder counts and the capacity, and
// judges the sum.
func TestMergeKeepsCapacity(t *testing.T) {
	a := nodeSummary(1, 2, Result{Strategy: "semaphore", Verdict: "x", Acquired: 10, Capacity: "semaphore", Permits: 3,
		Safety: Safety{MaxHolders: 2, LeakedPermits: 1}})
	b := nodeSummary(2, 2, Result{Strategy: "semaphore", Verdict: "x", Acquired: 10, Capacity: "semaphore", Permits: 3,
		Safety: Safety{MaxHolders: 3, LeakedPermits: 1}})
	m, err := Merge([]*Summary{a, b}, MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r := m.Results[0]
	if r.Capacity != "semaphore" || r.Permits != 3 || r.Safety.MaxHolders != 3 || r.Safety.LeakedPermits != 2 {
		t.Errorf("merged capacity %q permits %d max holders %d leaked %d; want semaphore, 3, 3, 2",
			r.Capacity, r.Permits, r.Safety.MaxHolders, r.Safety.LeakedPermits)
	}
	if r.Verdict != "DEADLOCK: 2 permits leaked" {
		t.Errorf("merged verdict %q", r.Verdict)
	}

	rw := func(node int, readers, writers uint64) *Summary {
		return nodeSummary(node, 2, Result{Strategy: "rw-lock", Verdict: "x", Acquired: 10, Capacity: "rw", ReadRatio: 0.9,
			Safety: Safety{MaxHolders: readers + writers, MaxReaders: readers, MaxWriters: writers}})
	}
	m, err = Merge([]*Summary{rw(1, 5, 1), rw(2, 7, 1)}, MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if s := m.Results[0].Safety; s.MaxReaders != 7 || s.MaxWriters != 1 || s.MaxHolders != 8 || m.Results[0].ReadRatio != 0.9 {
		t.Errorf("merged rw-lock: %+v, read ratio %v", s, m.Results[0].ReadRatio)
	}
}

// rwHistory is a process's history with its writers in Data and its readers apart.
func rwHistory(t *testing.T, process string, u int64, writers, readers []Section) *History {
	t.Helper()
	h := history(t, process, u, writers...)
	if len(readers) > 0 {
		data, err := EncodeSections(readers)
		if err != nil {
			t.Fatal(err)
		}
		h.Readers, h.Sections = data, h.Sections+len(readers)
	}
	return h
}

// Across processes, a semaphore's holders within its permits and a rw-lock's readers
// together are no overlap; past the capacity they are, and the holders seen together are
// counted.
func TestCheckAcrossCapacity(t *testing.T) {
	const u = 50
	tests := []struct {
		name                     string
		k                        KeyCapacity
		a, b                     *History
		overlaps, holders, r, wr uint64
	}{
		{"semaphore of 3, 3 inside", KeyCapacity{Kind: "semaphore", Permits: 3},
			history(t, "a", u, sec(0, 0, 1000, 0, 0), sec(0, 100, 1000, 0, 0)), history(t, "b", u, sec(0, 300, 900, 0, 0)), 0, 3, 0, 0},
		{"semaphore of 3, a 4th from another process", KeyCapacity{Kind: "semaphore", Permits: 3},
			history(t, "a", u, sec(0, 0, 1000, 0, 0), sec(0, 100, 1000, 0, 0)), history(t, "b", u, sec(0, 300, 900, 0, 0), sec(0, 400, 900, 0, 0)), 1, 4, 0, 0},
		{"semaphore, the 4th within the clocks' uncertainty", KeyCapacity{Kind: "semaphore", Permits: 3},
			history(t, "a", u, sec(0, 0, 1000, 0, 0), sec(0, 100, 1000, 0, 0), sec(0, 200, 1000, 0, 0)), history(t, "b", u, sec(0, 950, 1500, 0, 0)), 0, 3, 0, 0},
		{"rw: readers of two processes together", KeyCapacity{Kind: "rw"},
			rwHistory(t, "a", u, nil, []Section{sec(0, 0, 1000, 0, 0)}), rwHistory(t, "b", u, nil, []Section{sec(0, 300, 900, 0, 0)}), 0, 2, 2, 0},
		{"rw: a writer beside another process's reader", KeyCapacity{Kind: "rw"},
			rwHistory(t, "a", u, nil, []Section{sec(0, 0, 1000, 0, 0)}), rwHistory(t, "b", u, []Section{sec(0, 300, 900, 0, 0)}, nil), 1, 2, 1, 1},
		{"rw: a reader beside another process's writer", KeyCapacity{Kind: "rw"},
			rwHistory(t, "a", u, []Section{sec(0, 0, 1000, 0, 0)}, nil), rwHistory(t, "b", u, nil, []Section{sec(0, 300, 900, 0, 0)}), 1, 2, 1, 1},
		{"rw: two writers", KeyCapacity{Kind: "rw"},
			rwHistory(t, "a", u, []Section{sec(0, 0, 1000, 0, 0)}, nil), rwHistory(t, "b", u, []Section{sec(0, 300, 900, 0, 0)}, nil), 1, 2, 0, 2},
		{"set: each key a mutex", KeyCapacity{Kind: "set"},
			history(t, "a", u, sec(0, 0, 1000, 0, FlagReleased), sec(1, 0, 1000, 0, FlagReleased)), history(t, "b", u, sec(1, 300, 900, 0, FlagReleased), sec(2, 300, 900, 0, FlagReleased)), 1, 0, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := CheckAcrossCapacity([]*History{tt.a, tt.b}, tt.k)
			if err != nil {
				t.Fatal(err)
			}
			if c.Overlaps != tt.overlaps || c.MaxHolders != tt.holders || c.MaxReaders != tt.r || c.MaxWriters != tt.wr {
				t.Errorf("overlaps %d, holders %d (readers %d, writers %d); want %d, %d (%d, %d)",
					c.Overlaps, c.MaxHolders, c.MaxReaders, c.MaxWriters, tt.overlaps, tt.holders, tt.r, tt.wr)
			}
		})
	}
}

// The table notes what a lock that is not a mutex admitted; a mutex gets no such note.
func TestHoldersNote(t *testing.T) {
	s := &Summary{Results: []Result{
		{Strategy: "semaphore", Verdict: "safe", Capacity: "semaphore", Permits: 3, Safety: Safety{MaxHolders: 3}},
		{Strategy: "rw-lock", Verdict: "safe", Capacity: "rw", ReadRatio: 0.9, Safety: Safety{MaxHolders: 9, MaxReaders: 9, MaxWriters: 1}},
		{Strategy: "token", Verdict: "safe", Safety: Safety{MaxHolders: 1}},
	}}
	notes := strings.Join(noteLines(s), "\n")
	for _, want := range []string{"semaphore: holders: at most 3 per key at once (3 permits)",
		"rw-lock: holders: at most 9 per key at once (9 readers, 1 writer; read ratio 0.9)"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	if strings.Contains(notes, "token: holders") {
		t.Errorf("a mutex got a holders note:\n%s", notes)
	}
}

// A result measured while the hypervisor took a noticeable part of the machine (steal) says
// so beside its figures, in the text and in the HTML report; a little steal says nothing.
func TestStealNote(t *testing.T) {
	s := &Summary{Results: []Result{
		{Strategy: "token", Verdict: "safe", Client: ClientCost{Measured: true, HostCPUPercent: 70, HostCores: 2, HostStealPercent: 17.6}},
		{Strategy: "fenced", Verdict: "safe", Client: ClientCost{Measured: true, HostCPUPercent: 70, HostCores: 2, HostStealPercent: 4.9}},
	}}
	notes := strings.Join(noteLines(s), "\n")
	if !strings.Contains(notes, "token: the hypervisor took 18% of this machine's CPU over the window (steal") {
		t.Errorf("notes lack the steal of token's window:\n%s", notes)
	}
	if strings.Contains(notes, "fenced: the hypervisor") {
		t.Errorf("a steal under %.0f%% got a note:\n%s", NoteSteal, notes)
	}
}

// A fleet's machines' steal is averaged, as their busy share.
func TestMergeClientSteal(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	var inputs []*Summary
	for i, st := range []float64{10, 20, 30} {
		r := engineResult(t, newProcess(rng, 500, 300, 4), 10, i+1)
		r.Client = ClientCost{Measured: true, CPUUS: 1000, Cores: 1, HostCPUPercent: 60, HostCores: 2, HostStealPercent: st}
		inputs = append(inputs, viaJSON(t, nodeSummary(i+1, 3, r)))
	}
	merged, err := Merge(inputs, MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c := merged.Results[0].Client; c.HostStealPercent != 20 || c.HostCPUPercent != 60 {
		t.Errorf("client %+v: want the machines' steal averaged, 20%%, and their busy share, 60%%", c)
	}
}

// A fleet's start delay is its worst process's, as its scheduling latency: a capacity step
// across --procs children whose one child starts its arrivals late is bound by that child.
func TestMergeClientStartDelay(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	var inputs []*Summary
	for i, d := range []float64{900, 4200, 1300} {
		r := engineResult(t, newProcess(rng, 500, 300, 4), 10, i+1)
		r.Client = ClientCost{Measured: true, CPUUS: 1000, Cores: 1, StartDelayP99US: d}
		inputs = append(inputs, viaJSON(t, nodeSummary(i+1, 3, r)))
	}
	merged, err := Merge(inputs, MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c := merged.Results[0].Client; c.StartDelayP99US != 4200 {
		t.Errorf("client %+v: want the worst process's start delay, p99 4200 µs", c)
	}
}
