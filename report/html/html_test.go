package html

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/report"
)

// load reads a result file that the CLI wrote into testdata (testdata/README.md says how).
func load(t testing.TB, name string) *report.Summary {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var s report.Summary
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return &s
}

// render writes s as HTML.
func render(t testing.TB, s *report.Summary) string {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, s); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// resourceRef matches what would make a browser fetch something: a src or href that is not
// an anchor in the page, url(...) in CSS, @import.
var resourceRef = regexp.MustCompile(`(?i)\b(src|href|xlink:href)\s*=\s*["']?[^"'#\s>]|url\(\s*["']?[^"'#)\s]|@import`)

// checkSelfContained fails when the page refers to anything outside itself.
func checkSelfContained(t *testing.T, page string) {
	t.Helper()
	for _, bad := range []string{"http://", "https://", "//cdn", "<link", "<img", "<iframe"} {
		if i := strings.Index(strings.ToLower(page), bad); i >= 0 {
			t.Errorf("the page holds %q: %s", bad, page[max(i-80, 0):min(i+80, len(page))])
		}
	}
	if m := resourceRef.FindStringIndex(page); m != nil {
		t.Errorf("the page refers to a resource: %s", page[max(m[0]-40, 0):min(m[1]+80, len(page))])
	}
}

// charts counts the figures of a kind (data-chart) whose SVG holds data.
func charts(page, kind string) int {
	n := 0
	for _, fig := range strings.Split(page, `<figure class="chart"`)[1:] {
		fig, _, _ = strings.Cut(fig, "</figure>")
		if strings.Contains(fig, `data-chart="`+kind+`"`) && (strings.Contains(fig, "<polyline") || strings.Contains(fig, "<circle") || strings.Contains(fig, "<rect class")) {
			n++
		}
	}
	return n
}

// A real run (testdata/run.json): set-nx-del and token UNSAFE under holder-pause with a
// 100ms ttl, fenced safe (fenced), a Redis pause at 2s.
func TestRunReport(t *testing.T) {
	s := load(t, "run.json")
	page := render(t, s)
	checkSelfContained(t, page)
	if !report.IsUnsafe(s.Results[0].Verdict) {
		t.Fatalf("testdata/run.json should hold an UNSAFE result first, has %q", s.Results[0].Verdict)
	}
	for i, r := range s.Results {
		id := resultID(i)
		for _, want := range []string{
			`<section id="` + id + `" class="result"><h2>` + r.Strategy + "</h2>",
			`<a href="#` + id + `-evidence">`, `id="` + id + `-evidence"`,
			">" + esc(r.Verdict) + "<",
			esc(explainVerdict(&r)),
		} {
			if !strings.Contains(page, want) {
				t.Errorf("%s: the page lacks %q", r.Strategy, want)
			}
		}
		for j, e := range r.Events {
			row := fmt.Sprintf(`<tr id="%s-ev%d"><td>%d</td>`, id, j+1, j+1)
			if !strings.Contains(page, row) || !strings.Contains(page, esc(e.What)) || !strings.Contains(page, `href="#`+row[8:len(row)-10]) {
				t.Errorf("%s: event %d (%s) is not in the events table and linked from its chart mark", r.Strategy, j+1, e.What)
			}
		}
	}
	if !strings.Contains(page, "UNSAFE: ") || !strings.Contains(page, "mutual exclusion failed") || !strings.Contains(page, "releases deleted the lock of a later holder (misdeletes)") {
		t.Error("the UNSAFE verdict is not explained in words")
	}
	n := len(s.Results)
	for kind, want := range map[string]int{"timeline": 2 * n, "latency": n, "evidence": n} {
		if got := charts(page, kind); got != want {
			t.Errorf("%d %s charts with data, want %d", got, kind, want)
		}
	}
	for _, lat := range []string{">acquire</button>", ">handoff</button>", ">hold</button>", ">release</button>", ">99.999%<"} {
		if !strings.Contains(page, lat) {
			t.Errorf("latency curves lack %q", lat)
		}
	}
	for _, want := range []string{"holder-pause:p=0.2,d=300ms", "ttl 100ms", "Redis 7", "commands/acquire", "Jain (1 = even)", "@media print", "width=device-width"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if again := render(t, s); again != page {
		t.Error("two renderings of one Summary differ")
	}
}

// A real fleet run (testdata/fleet.json, 2 processes merged): UNSAFE and DEADLOCK, with
// the cross-process check and fairness across processes.
func TestFleetReport(t *testing.T) {
	s := load(t, "fleet.json")
	page := render(t, s)
	checkSelfContained(t, page)
	r := s.Results[0]
	if r.Safety.StuckKeys == 0 || r.Safety.CrossProcess == nil || r.Fairness.Processes == nil {
		t.Fatalf("testdata/fleet.json should hold stuck keys, a cross-process check and process fairness: %+v", r.Safety)
	}
	for _, want := range []string{"DEADLOCK", "without a ttl at the phase&#39;s end", "Across 2 processes", "seen only in their merged histories",
		"<td>processes</td>", "proc Jain"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}

func TestSweepReport(t *testing.T) {
	s := load(t, "sweep.json")
	page := render(t, s)
	checkSelfContained(t, page)
	if got := charts(page, "sweep"); got != 4 {
		t.Errorf("%d sweep charts, want 4", got)
	}
	for _, rec := range s.Recommendations {
		if !strings.Contains(page, esc(rec)) {
			t.Errorf("recommendation %q missing", rec)
		}
	}
	// Both recommendations in testdata/sweep.json name ttl 1s: one mark, at its position.
	if !strings.Contains(page, "★ token, fenced") {
		t.Error("the recommended ttl is not marked")
	}
	if strings.Contains(page, "token, token") {
		t.Error("the title repeats the sweep's strategies")
	}
}

func TestCapacityReport(t *testing.T) {
	s := load(t, "capacity.json")
	page := render(t, s)
	checkSelfContained(t, page)
	c := s.Capacity[0]
	for _, want := range []string{esc(report.CapacityAnswer(c)), "SLO p99 5ms", "max in SLO " + report.FormatRate(c.MaxRate) + "/s"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	for _, st := range c.Steps {
		if !strings.Contains(page, ">"+esc(stepResult(st))+"<") {
			t.Errorf("step %v/s: result %q missing", st.Offered, stepResult(st))
		}
	}
	if got := charts(page, "capacity"); got != 2 {
		t.Errorf("%d capacity charts, want 2", got)
	}
	if got, fails := strings.Count(page, `<circle class="fail"`), 2*(len(c.Steps)-1); got != fails {
		t.Errorf("%d failed-step marks, want %d (every step but one failed, in both charts)", got, fails)
	}
}

func TestComparisonReport(t *testing.T) {
	a := load(t, "run.json")
	b := load(t, "run.json")
	b.Results[1].AcquireRate /= 2 // B's token got slower
	c, err := report.Compare(a, b, report.CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteComparison(&buf, c); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	checkSelfContained(t, page)
	if got := charts(page, "compare"); got != len(c.Rows) {
		t.Errorf("%d comparison charts, want %d", got, len(c.Rows))
	}
	if len(c.Regressions) != 1 || !strings.Contains(page, esc(c.Regressions[0])) || strings.Count(page, `class="bad">REGRESSION`) != 1 {
		t.Errorf("the one regression (%v) is not marked once", c.Regressions)
	}
}

// A 10-strategy, 60-second run stays within 2 MB: built from testdata/run.json's real
// histograms, each result's seconds and events repeated to fill 60 seconds.
func TestSizeOfALongRun(t *testing.T) {
	base := load(t, "run.json")
	s := *base
	s.Results = nil
	s.Config.Strategies = nil
	s.Config.DurationS = 60
	for i := range 10 {
		r := base.Results[i%len(base.Results)]
		r.Strategy = fmt.Sprintf("%s-%d", r.Strategy, i)
		r.DurationS = 60
		tl, ivs, evs := r.Timeline, r.Intervals, r.Events
		r.Timeline, r.Intervals, r.Events = nil, nil, nil
		for sec := range 60 {
			x := tl[sec%len(tl)]
			x.TS = float64(sec + 1)
			r.Timeline = append(r.Timeline, x)
			iv := ivs[sec%len(ivs)]
			iv.StartMS, iv.EndMS = ivs[0].StartMS+int64(sec)*1000, ivs[0].StartMS+int64(sec+1)*1000
			r.Intervals = append(r.Intervals, iv)
		}
		for k := range 20 {
			e := evs[k%len(evs)]
			e.TS += float64(k / len(evs) * 4)
			r.Events = append(r.Events, e)
		}
		s.Results = append(s.Results, r)
		s.Config.Strategies = append(s.Config.Strategies, r.Strategy)
	}
	page := render(t, &s)
	t.Logf("10 strategies, 60 s, 20 events each: %d bytes", len(page))
	if len(page) > 2<<20 {
		t.Errorf("%d bytes, more than 2 MB", len(page))
	}
	if got := charts(page, "timeline"); got != 20 {
		t.Errorf("%d timeline charts, want 20", got)
	}
}
