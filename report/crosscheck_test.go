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
