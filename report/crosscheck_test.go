package report

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func TestSectionsRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var secs []Section
	at := int64(1_764_000_000_000_000) // a Redis TIME in µs
	for range 5000 {
		at += 1 + rng.Int64N(300) // distinct entry times: the order after sorting is one
		secs = append(secs, Section{Key: rng.Int32N(100), Flags: SectionFlags(rng.IntN(128)),
			EnterUS: at, ExitUS: at + rng.Int64N(5000), Fence: rng.Uint64N(1 << 40)})
	}
	rng.Shuffle(len(secs), func(i, j int) { secs[i], secs[j] = secs[j], secs[i] })
	want := slices.Clone(secs)
	data, err := EncodeSections(secs)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeSections(data)
	if err != nil {
		t.Fatal(err)
	}
	slices.SortStableFunc(want, func(a, b Section) int { return int(a.EnterUS - b.EnterUS) })
	if !slices.Equal(got, want) {
		t.Fatalf("decoded %d sections differ from the %d encoded", len(got), len(want))
	}
	if perSection := float64(len(data)) / float64(len(want)); perSection > 16 {
		t.Errorf("%.1f bytes of base64 per section: the history would bloat the result", perSection)
	}
	if _, err := DecodeSections("bm90IGRlZmxhdGU="); err == nil {
		t.Error("garbage decoded without an error")
	}
}

// history builds one process's history from sections.
func history(t *testing.T, process string, uncertaintyUS int64, secs ...Section) *History {
	t.Helper()
	data, err := EncodeSections(secs)
	if err != nil {
		t.Fatal(err)
	}
	return &History{Process: process, UncertaintyUS: uncertaintyUS, Sections: len(secs), Data: data}
}

func sec(key int32, enter, exit int64, fence uint64, flags SectionFlags) Section {
	return Section{Key: key, EnterUS: enter, ExitUS: exit, Fence: fence, Flags: flags}
}

func TestCheckAcross(t *testing.T) {
	const u = 50 // µs per process: two processes' sections must overlap by more than 100µs
	tests := []struct {
		name string
		a, b []Section
		want CrossCheck
	}{
		{
			name: "one after the other: nothing",
			a:    []Section{sec(0, 1000, 2000, 0, FlagReleased), sec(0, 5000, 6000, 0, FlagReleased)},
			b:    []Section{sec(0, 2100, 4900, 0, FlagReleased)},
		},
		{
			name: "overlap within the clocks' uncertainty is not counted",
			a:    []Section{sec(0, 1000, 2080, 0, FlagReleased)},
			b:    []Section{sec(0, 2000, 3000, 0, FlagReleased)},
		},
		{
			name: "other keys never overlap",
			a:    []Section{sec(0, 1000, 5000, 0, FlagReleased)},
			b:    []Section{sec(1, 2000, 3000, 0, FlagReleased)},
		},
		{
			name: "a lease lapsed mid-hold: overlap, and the stale holder's last write got through",
			a:    []Section{sec(0, 1000, 9000, 0, 0)},
			b:    []Section{sec(0, 5000, 6000, 0, FlagReleased)},
			want: CrossCheck{Overlaps: 1, StaleWrites: 1},
		},
		{
			name: "an overlap its own process already counted is not counted again",
			a:    []Section{sec(0, 1000, 9000, 0, 0)},
			b:    []Section{sec(0, 5000, 6000, 0, FlagReleased|FlagOverlap)},
			want: CrossCheck{StaleWrites: 1},
		},
		{
			name: "a blind DEL after the lease lapsed removes the later holder's lock",
			a:    []Section{sec(0, 1000, 5000, 0, FlagReleased)},
			b:    []Section{sec(0, 3000, 9000, 0, FlagReleased)},
			want: CrossCheck{Overlaps: 1, StaleWrites: 1, Misdeletes: 1},
		},
		{
			name: "a misdelete its own process counted stays one",
			a:    []Section{sec(0, 1000, 5000, 0, FlagReleased|FlagMisdelete)},
			b:    []Section{sec(0, 3000, 9000, 0, FlagReleased)},
			want: CrossCheck{Overlaps: 1, StaleWrites: 1},
		},
		{
			name: "fenced: the stale holder's last write is refused",
			a:    []Section{sec(0, 1000, 9000, 7, 0)},
			b:    []Section{sec(0, 5000, 6000, 8, FlagReleased)},
			want: CrossCheck{Overlaps: 1, StaleFences: 1},
		},
		{
			name: "aborted: the stale holder makes no last write",
			a:    []Section{sec(0, 1000, 9000, 0, FlagAborted)},
			b:    []Section{sec(0, 5000, 6000, 0, FlagReleased)},
			want: CrossCheck{Overlaps: 1},
		},
		{
			name: "the fence went backwards: the next holder's writes are refused",
			a:    []Section{sec(0, 1000, 2000, 500, FlagReleased)},
			b:    []Section{sec(0, 3000, 4000, 1, FlagReleased)},
			want: CrossCheck{FenceRegressions: 2},
		},
		{
			name: "one fence, two leases",
			a:    []Section{sec(0, 1000, 2000, 9, FlagReleased)},
			b:    []Section{sec(0, 3000, 4000, 9, FlagReleased)},
			want: CrossCheck{FenceReuses: 2},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := CheckAcross([]*History{history(t, "a", u, tt.a...), history(t, "b", u, tt.b...)})
			if err != nil {
				t.Fatal(err)
			}
			tt.want.Processes, tt.want.Sections, tt.want.UncertaintyUS, tt.want.Complete = 2, uint64(len(tt.a)+len(tt.b)), 2*u, true
			tt.want.MeasuredSections = tt.want.Sections
			if got != tt.want {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

// TestCheckAcrossIgnoresOwnProcess: sections of one process are its own oracle's business,
// however they overlap.
func TestCheckAcrossIgnoresOwnProcess(t *testing.T) {
	a := history(t, "a", 10, sec(0, 1000, 9000, 0, 0), sec(0, 2000, 3000, 0, FlagOverlap|FlagReleased))
	b := history(t, "b", 10)
	got, err := CheckAcross([]*History{a, b})
	if err != nil {
		t.Fatal(err)
	}
	if got.Overlaps+got.StaleWrites+got.Misdeletes != 0 {
		t.Errorf("one process's own sections were counted across processes: %+v", got)
	}
}

// TestMergeChecksAcrossProcesses: report merge turns two safe inputs whose histories overlap
// into an UNSAFE merged verdict, and says when an input carries no history.
func TestMergeChecksAcrossProcesses(t *testing.T) {
	a := nodeSummary(1, 2, Result{Strategy: "token", Verdict: "safe", Acquired: 1,
		History: history(t, "a", 40, sec(0, 1000, 9000, 0, FlagReleased))})
	b := nodeSummary(2, 2, Result{Strategy: "token", Verdict: "safe", Acquired: 1,
		History: history(t, "b", 40, sec(0, 5000, 6000, 0, FlagReleased))})
	merged, err := Merge([]*Summary{a, b}, MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r := merged.Results[0]
	if r.Verdict != "UNSAFE: 1 overlap" || r.Safety.CrossProcess == nil || r.Safety.CrossProcess.Overlaps != 1 {
		t.Errorf("verdict %q, cross-process %+v: want the overlap between the processes found", r.Verdict, r.Safety.CrossProcess)
	}
	if r.History != nil {
		t.Error("the merged result carries a history: merge checks the inputs', it makes none")
	}

	b.Results[0].History = nil
	merged, err = Merge([]*Summary{a, b}, MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r = merged.Results[0]
	if r.Verdict != "safe" || r.Safety.CrossProcess != nil || !slices.ContainsFunc(r.Notes, func(n string) bool { return strings.Contains(n, "not checked") }) {
		t.Errorf("without a history: verdict %q, notes %q: want safe with a note that the processes were not checked", r.Verdict, r.Notes)
	}
}

// TestMergeCountsTheMeasuredWindow: the cross-process check counts what the processes
// count — the sections of the measured window, one per acquire — so its sections and the
// acquires agree, and overlaps never outnumber the sections that can produce them. Sections
// of the warm-up and after the window (FlagUnmeasured) are checked against, never counted.
// Before, a two-process merge read "26 overlaps" over 25 acquires.
func TestMergeCountsTheMeasuredWindow(t *testing.T) {
	const out = FlagUnmeasured | FlagReleased
	// Warm-up: a lease shorter than the hold, the two processes inside together three times.
	// Measured: one section each, one after the other. After the window: once more together.
	a := []Section{sec(0, 0, 900, 0, out), sec(0, 2000, 2900, 0, out), sec(0, 4000, 4900, 0, out),
		sec(0, 10_000, 10_500, 0, FlagReleased), sec(0, 30_000, 30_900, 0, out)}
	b := []Section{sec(0, 500, 1400, 0, out), sec(0, 2500, 3400, 0, out), sec(0, 4500, 5400, 0, out),
		sec(0, 20_000, 20_500, 0, FlagReleased), sec(0, 30_500, 31_400, 0, out)}
	merged, err := Merge([]*Summary{
		nodeSummary(1, 2, Result{Strategy: "token", Verdict: "safe", Workers: 1, Acquired: 1, History: history(t, "a", 20, a...)}),
		nodeSummary(2, 2, Result{Strategy: "token", Verdict: "safe", Workers: 1, Acquired: 1, History: history(t, "b", 20, b...)}),
	}, MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r := merged.Results[0]
	c := r.Safety.CrossProcess
	if c == nil {
		t.Fatal("no cross-process check")
	}
	if c.MeasuredSections != r.Acquired || c.Sections != 10 {
		t.Errorf("%d sections, %d measured, %d acquires: want 10 checked, 2 of them measured, one per acquire", c.Sections, c.MeasuredSections, r.Acquired)
	}
	if r.Safety.Overlaps > c.MeasuredSections || r.Safety.Overlaps != 0 || r.Verdict != VerdictSafe {
		t.Errorf("%d overlaps (verdict %q) over %d measured sections: the warm-up's and the drain's were counted", r.Safety.Overlaps, r.Verdict, c.MeasuredSections)
	}
	if !slices.ContainsFunc(r.Notes, func(n string) bool {
		return strings.Contains(n, "2 critical sections checked, one per acquire, beside 8 of the warm-up and the window's end")
	}) {
		t.Errorf("notes %q: want the sections checked, one per acquire, and those outside the window", r.Notes)
	}

	// A measured section that enters while an unmeasured one of another process is inside
	// is an overlap all the same: it happened in the window.
	b[3] = sec(0, 30_200, 30_700, 0, FlagReleased)
	merged, err = Merge([]*Summary{
		nodeSummary(1, 2, Result{Strategy: "token", Verdict: "safe", Workers: 1, Acquired: 1, History: history(t, "a", 20, a...)}),
		nodeSummary(2, 2, Result{Strategy: "token", Verdict: "safe", Workers: 1, Acquired: 1, History: history(t, "b", 20, b...)}),
	}, MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r := merged.Results[0]; r.Safety.Overlaps != 1 || r.Safety.Misdeletes != 0 {
		t.Errorf("overlaps %d, misdeletes %d: want the measured section's overlap with the unmeasured one counted, "+
			"and nothing for the unmeasured one's release", r.Safety.Overlaps, r.Safety.Misdeletes)
	}
}

// TestMergeExplainsUnmarkedHistories: a history that kept every cycle without marking the
// warm-up's (a lockbench before FlagUnmeasured) holds more sections than its process has
// acquires; the note says why they differ.
func TestMergeExplainsUnmarkedHistories(t *testing.T) {
	a := history(t, "a", 20, sec(0, 0, 900, 0, FlagReleased), sec(0, 10_000, 10_500, 0, FlagReleased))
	b := history(t, "b", 20, sec(0, 500, 1400, 0, FlagReleased), sec(0, 20_000, 20_500, 0, FlagReleased))
	merged, err := Merge([]*Summary{
		nodeSummary(1, 2, Result{Strategy: "token", Verdict: "safe", Workers: 1, Acquired: 1, History: a}),
		nodeSummary(2, 2, Result{Strategy: "token", Verdict: "safe", Workers: 1, Acquired: 1, History: b}),
	}, MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r := merged.Results[0]
	if !slices.ContainsFunc(r.Notes, func(n string) bool {
		return strings.Contains(n, "4 critical sections checked against 2 acquires: the histories also hold the warm-up's cycles")
	}) {
		t.Errorf("notes %q: want why 4 sections were checked against 2 acquires", r.Notes)
	}
}
