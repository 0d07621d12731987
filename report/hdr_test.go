package report

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// histogramOf records values (µs) into a NewHistogram.
func histogramOf(t *testing.T, values ...int64) *hdrhistogram.Histogram {
	t.Helper()
	h := NewHistogram()
	for _, v := range values {
		if err := h.RecordValue(v); err != nil {
			t.Fatalf("record %d: %v", v, err)
		}
	}
	return h
}

// encoded is EncodeHistogram that fails the test on error.
func encoded(t *testing.T, h *hdrhistogram.Histogram) string {
	t.Helper()
	s, err := EncodeHistogram(h)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// spread returns n values from lo to hi (µs), evenly spaced.
func spread(n int, lo, hi int64) []int64 {
	v := make([]int64, n)
	for i := range v {
		v[i] = lo + (hi-lo)*int64(i)/int64(max(n-1, 1))
	}
	return v
}

func TestNewHistogramRange(t *testing.T) {
	h := NewHistogram()
	for _, v := range []int64{LowestUS, 85, HighestUS} {
		if err := h.RecordValue(v); err != nil {
			t.Errorf("RecordValue(%d): %v", v, err)
		}
	}
	if err := h.RecordValue(2 * HighestUS); err == nil {
		t.Errorf("RecordValue(2h) succeeded, want an out-of-range error")
	}
	if got := h.SignificantFigures(); got != SignificantDigits {
		t.Errorf("SignificantFigures = %d, want %d", got, SignificantDigits)
	}
}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	h := histogramOf(t, append(spread(10000, 1, 50000), 3_000_000_000, 7, 7, 7)...)
	s := encoded(t, h)
	if s == "" || strings.ContainsAny(s, "\n ") {
		t.Fatalf("EncodeHistogram = %q, want one line of base64", s)
	}
	got, err := DecodeHistogram(s)
	if err != nil {
		t.Fatal(err)
	}
	if got.TotalCount() != h.TotalCount() {
		t.Errorf("TotalCount = %d, want %d", got.TotalCount(), h.TotalCount())
	}
	for _, q := range []float64{0, 10, 50, 90, 99, 99.9, 99.99, 100} {
		if a, b := got.ValueAtPercentile(q), h.ValueAtPercentile(q); a != b {
			t.Errorf("p%v = %d after round trip, want %d", q, a, b)
		}
	}
	if got.Max() != h.Max() || !got.Equals(h) {
		t.Errorf("decoded histogram differs: max %d want %d", got.Max(), h.Max())
	}
}

func TestEncodeDecodeEmpty(t *testing.T) {
	if s := encoded(t, NewHistogram()); s != "" {
		t.Errorf("empty histogram encodes as %q, want \"\"", s)
	}
	if s := encoded(t, nil); s != "" {
		t.Errorf("nil histogram encodes as %q, want \"\"", s)
	}
	h, err := DecodeHistogram("")
	if err != nil || h == nil || h.TotalCount() != 0 || h.HighestTrackableValue() < HighestUS {
		t.Fatalf("DecodeHistogram(\"\") = %v, %v; want an empty NewHistogram", h, err)
	}
	if _, err := DecodeHistogram("not a histogram"); err == nil {
		t.Errorf("DecodeHistogram(garbage) = nil error")
	}
}

func TestPercentilesOfKnownValues(t *testing.T) {
	p := PercentilesOf(histogramOf(t, spread(1000, 1, 1000)...)) // 1, 2, ..., 1000
	want := Percentiles{Count: 1000, P50: 500, P90: 900, P99: 990, P999: 999, Max: 1000, Mean: 500.5}
	if p.Count != want.Count {
		t.Errorf("Count = %d, want %d", p.Count, want.Count)
	}
	// 3 significant digits: values are exact to within 0.1% (the histogram's bucket width).
	near := func(name string, got, want float64) {
		if math.Abs(got-want) > want*0.001+1 {
			t.Errorf("%s = %v, want %v ± 0.1%%", name, got, want)
		}
	}
	near("P50", float64(p.P50), float64(want.P50))
	near("P90", float64(p.P90), float64(want.P90))
	near("P99", float64(p.P99), float64(want.P99))
	near("P999", float64(p.P999), float64(want.P999))
	near("Max", float64(p.Max), float64(want.Max))
	near("Mean", p.Mean, want.Mean)
}

func TestPercentilesOfMonotonic(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	dists := map[string]func() int64{
		"uniform":     func() int64 { return 1 + rng.Int64N(10_000) },
		"exponential": func() int64 { return 1 + int64(rng.ExpFloat64()*2000) },
		"bimodal":     func() int64 { return []int64{50, 2_000_000}[rng.IntN(2)] },
		"one outlier": func() int64 { return []int64{10, 10, 10, 10, 3_600_000_000}[rng.IntN(5)] },
	}
	for name, next := range dists {
		for _, n := range []int{1, 7, 1000, 100_000} {
			h := NewHistogram()
			for range n {
				if err := h.RecordValue(next()); err != nil {
					t.Fatal(err)
				}
			}
			p := PercentilesOf(h)
			ordered := []int64{p.P50, p.P90, p.P99, p.P999, p.Max}
			if !slices.IsSorted(ordered) || p.P50 <= 0 || p.Count != uint64(n) {
				t.Errorf("%s n=%d: count %d, p50..max %v not monotonic and positive", name, n, p.Count, ordered)
			}
		}
	}
	if p := PercentilesOf(NewHistogram()); p != (Percentiles{}) {
		t.Errorf("PercentilesOf(empty) = %+v, want zeros", p)
	}
	if p := PercentilesOf(nil); p != (Percentiles{}) {
		t.Errorf("PercentilesOf(nil) = %+v, want zeros", p)
	}
}

// hdrSummary has two results named token (a sweep) and one whose name is not a safe file
// name; each result has per-second intervals, the last one empty, with all four histograms
// but handoff, which records in every other second only.
func hdrSummary(t *testing.T) *Summary {
	t.Helper()
	start := time.Date(2025, 3, 1, 10, 0, 0, 250*int(time.Millisecond), time.UTC)
	result := func(name string, values []int64, intervals int) Result {
		h := histogramOf(t, values...)
		r := Result{Strategy: name, LatencyUS: Latencies{Acquire: PercentilesOf(h)}}
		r.Histograms.Acquire = encoded(t, h)
		per := len(values) / max(intervals-1, 1)
		for i := range intervals {
			startMS := start.UnixMilli() + int64(i)*1000
			iv := Interval{StartMS: startMS, EndMS: startMS + 1000}
			if i < intervals-1 { // the last second recorded nothing
				part := values[i*per : (i+1)*per]
				iv.Acquire = encoded(t, histogramOf(t, part...))
				iv.Release = encoded(t, histogramOf(t, timesRatio(part, 1, 3)...))
				iv.Hold = encoded(t, histogramOf(t, timesRatio(part, 7, 1)...))
				if i%2 == 0 {
					iv.Handoff = encoded(t, histogramOf(t, timesRatio(part, 2, 1)...))
				}
			}
			r.Intervals = append(r.Intervals, iv)
		}
		return r
	}
	return &Summary{
		Tool:      "lockbench",
		StartedAt: start,
		Results: []Result{
			result("token", spread(3000, 50, 20_000), 4),
			result("token", spread(500, 1000, 900_000), 3),
			result("weird/name", spread(10, 5, 50), 1),
		},
	}
}

// timesRatio is values × num / den, each at least 1.
func timesRatio(values []int64, num, den int64) []int64 {
	out := make([]int64, len(values))
	for i, v := range values {
		out[i] = max(v*num/den, 1)
	}
	return out
}

func TestWriteHDRFiles(t *testing.T) {
	t.Parallel() // histograms are slow to build and encode under -race
	s := hdrSummary(t)
	dir := filepath.Join(t.TempDir(), "out", "hdr") // does not exist yet
	paths, err := WriteHDRFiles(dir, s)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, base := range []string{"token", "token-2", "weird_name"} {
		want = append(want, filepath.Join(dir, base+".hgrm"), filepath.Join(dir, base+".hlog"))
	}
	if !slices.Equal(paths, want) {
		t.Fatalf("paths = %v, want %v", paths, want)
	}
	for i := range s.Results {
		r := &s.Results[i]
		checkHGRM(t, paths[2*i], r)
		checkHLOG(t, paths[2*i+1], r)
	}
}

// hgrmRow is one percentile row of a .hgrm file.
type hgrmRow struct {
	valueMS    float64
	percentile float64
	totalCount int64
}

// checkHGRM parses path as a .hgrm file and compares it with r's acquire histogram.
func checkHGRM(t *testing.T, path string, r *Result) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	if !sc.Scan() || strings.Join(strings.Fields(sc.Text()), " ") != "Value Percentile TotalCount 1/(1-Percentile)" {
		t.Fatalf("%s: first line %q is not the .hgrm header", path, sc.Text())
	}
	var rows []hgrmRow
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) != 4 {
			continue // blank line, #[...] footer
		}
		var row hgrmRow
		var errs [3]error
		row.valueMS, errs[0] = strconv.ParseFloat(fields[0], 64)
		row.percentile, errs[1] = strconv.ParseFloat(fields[1], 64)
		row.totalCount, errs[2] = strconv.ParseInt(fields[2], 10, 64)
		if errs[0] != nil || errs[1] != nil || errs[2] != nil {
			t.Fatalf("%s: bad row %q: %v", path, sc.Text(), errs)
		}
		rows = append(rows, row)
	}
	if len(rows) < 2 {
		t.Fatalf("%s: %d percentile rows", path, len(rows))
	}
	if last := rows[len(rows)-1]; last.percentile != 1 || uint64(last.totalCount) != r.LatencyUS.Acquire.Count {
		t.Errorf("%s: last row %+v, want percentile 1 and count %d", path, last, r.LatencyUS.Acquire.Count)
	}
	i := slices.IndexFunc(rows, func(row hgrmRow) bool { return row.percentile >= 0.5 })
	wantMS := float64(r.LatencyUS.Acquire.P50) / 1000
	if i < 0 || math.Abs(rows[i].valueMS-wantMS) > wantMS*0.001+0.001 {
		t.Errorf("%s: value at percentile 0.5 = %+v, want %.3f ms (p50 %d µs)", path, rows[i], wantMS, r.LatencyUS.Acquire.P50)
	}
}

// checkHLOG reads path back with hdrhistogram-go's log reader and compares it with
// r.Intervals: every second has the four tags in order, values in ns that are r's µs × 1000
// (to within the histograms' 0.1%), counts exact, times to the millisecond; the header says
// nanoseconds and carries a StartTime with milliseconds.
func checkHLOG(t *testing.T, path string, r *Result) {
	t.Helper()
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(text), "latencies in nanoseconds") {
		t.Errorf("%s: the header does not say the unit:\n%.400s", path, text)
	}
	if len(r.Intervals) > 0 {
		start := fmt.Sprintf("#[StartTime: %d.%03d (seconds since epoch), ", r.Intervals[0].StartMS/1000, r.Intervals[0].StartMS%1000)
		if !strings.Contains(string(text), start) {
			t.Errorf("%s: no line %q:\n%.400s", path, start, text)
		}
	}
	reader := hdrhistogram.NewHistogramLogReader(bytes.NewReader(text))
	var got []*hdrhistogram.Histogram
	for {
		h, err := reader.NextIntervalHistogram()
		if err != nil {
			t.Fatalf("%s: interval %d: %v", path, len(got), err)
		}
		if h == nil { // end of log
			break
		}
		got = append(got, h)
	}
	// Each second: acquire untagged (the tools' default), then one histogram per tag.
	lineTags := append([]string{""}, HLOGTags...)
	if len(got) != len(lineTags)*len(r.Intervals) {
		t.Fatalf("%s: %d interval histograms, want (1 untagged + %d tags) × %d seconds", path, len(got), len(HLOGTags), len(r.Intervals))
	}
	for i, h := range got {
		iv := &r.Intervals[i/len(lineTags)]
		tag := lineTags[i%len(lineTags)]
		if h.Tag() != tag {
			t.Errorf("%s: histogram %d has tag %q, want %q", path, i, h.Tag(), tag)
		}
		want, err := DecodeHistogram(iv.tagged()[max(i%len(lineTags)-1, 0)])
		if err != nil {
			t.Fatal(err)
		}
		checkNanoseconds(t, fmt.Sprintf("%s: second %d %q", path, i/len(lineTags), tag), h, want)
		// The reader rebuilds absolute times from float seconds: allow 1 ms of rounding.
		if d := h.StartTimeMs() - iv.StartMS; d < -1 || d > 1 {
			t.Errorf("%s: interval %d starts at %d ms, want %d", path, i, h.StartTimeMs(), iv.StartMS)
		}
		if d := h.EndTimeMs() - iv.EndMS; d < -1 || d > 1 {
			t.Errorf("%s: interval %d ends at %d ms, want %d", path, i, h.EndTimeMs(), iv.EndMS)
		}
	}
}

// checkNanoseconds checks that ns (values in ns) holds what us (values in µs) holds: the same
// count, and percentiles and max that are us's × 1000 to within 0.1% (plus a µs).
func checkNanoseconds(t *testing.T, what string, ns, us *hdrhistogram.Histogram) {
	t.Helper()
	if ns.TotalCount() != us.TotalCount() {
		t.Errorf("%s: count %d, want %d", what, ns.TotalCount(), us.TotalCount())
		return
	}
	got, want := PercentilesOf(ns), PercentilesOf(us)
	for _, p := range []struct {
		name     string
		got, wnt int64
	}{{"p50", got.P50, want.P50}, {"p90", got.P90, want.P90}, {"p99", got.P99, want.P99}, {"max", got.Max, want.Max}} {
		if d := math.Abs(float64(p.got)/1000 - float64(p.wnt)); d > float64(p.wnt)*0.001+1 {
			t.Errorf("%s: %s %d ns, want %d µs × 1000", what, p.name, p.got, p.wnt)
		}
	}
}

// nanoseconds keeps a histogram's distribution, ×1000.
func TestNanoseconds(t *testing.T) {
	for _, values := range [][]int64{spread(3000, 50, 20_000), spread(500, 1000, 900_000), {1}, {HighestUS}, nil} {
		us := histogramOf(t, values...)
		checkNanoseconds(t, fmt.Sprintf("%d values", len(values)), nanoseconds(us), us)
	}
}

func TestWriteHDRFilesNoResults(t *testing.T) {
	paths, err := WriteHDRFiles(t.TempDir(), &Summary{})
	if err != nil || len(paths) != 0 {
		t.Errorf("WriteHDRFiles(no results) = %v, %v; want no files", paths, err)
	}
}

func TestWriteHDRFilesBadHistogram(t *testing.T) {
	s := &Summary{Results: []Result{{Strategy: "token", Histograms: Histograms{Acquire: "!!"}}}}
	if _, err := WriteHDRFiles(t.TempDir(), s); err == nil || !strings.Contains(err.Error(), "token") {
		t.Errorf("WriteHDRFiles(corrupt histogram) error = %v, want one naming the strategy", err)
	}
}

// Each phase of one strategy in one run — a sweep, a profile's labeled phases — gets HDR
// files of its own, named as its table row; no phase's files overwrite another's.
func TestWriteHDRFilesOnePairPerPhase(t *testing.T) {
	t.Parallel() // histograms are slow to build and encode under -race
	s := hdrSummary(t)
	token := s.Results[0]
	token.Intervals = token.Intervals[:1] // one second is enough to name the files by
	phase := func(strategy, label string) Result {
		r := token
		r.Strategy, r.Label = strategy, label
		return r
	}
	s.Results = []Result{
		phase("token", "token ttl=200ms"), // a sweep's label
		phase("token", "token ttl=1s"),
		phase("fenced", "fenced ttl=1s"),
		phase("token", "gc-pause"), // a profile's phase label: prefixed by the strategy
		phase("token", "a/b: c\\d*?"),
		phase("token", "a_b_-c_d__"), // fileStem("token a/b: c\\d*?") too
		phase("token", "Gc-Pause"),   // token-gc-pause on a file system that ignores case
		phase("token", "ttl=1s"),     // the same name as the second, given another way
	}
	dir := t.TempDir()
	paths, err := WriteHDRFiles(dir, s)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, base := range []string{"token-ttl=200ms", "token-ttl=1s", "fenced-ttl=1s", "token-gc-pause",
		"token-a_b_-c_d__", "token-a_b_-c_d__-2", "token-Gc-Pause-2", "token-ttl=1s-2"} {
		want = append(want, filepath.Join(dir, base+".hgrm"), filepath.Join(dir, base+".hlog"))
	}
	if !slices.Equal(paths, want) {
		t.Fatalf("paths = %q\nwant    %q", paths, want)
	}
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 2*len(s.Results) {
		t.Fatalf("%d files in %s (%v), want %d: one phase's file overwrote another's", len(entries), dir, err, 2*len(s.Results))
	}
	hlog, err := os.ReadFile(filepath.Join(dir, "token-ttl=1s.hlog"))
	if err != nil || !strings.Contains(string(hlog), "lockbench token ttl=1s:") {
		t.Errorf("token-ttl=1s.hlog does not say which phase it is (%v):\n%.300s", err, hlog)
	}
}

// A sweep laid out by the engine: every phase labeled; its files are named by the labels.
func TestHDRFileBasesOfASweep(t *testing.T) {
	got := HDRFileBases(kindSweepSummary().Results)
	want := []string{"token-ttl=200ms", "fenced-ttl=200ms", "token-ttl=1s", "fenced-ttl=1s", "token-ttl=5s", "fenced-ttl=5s"}
	if !slices.Equal(got, want) {
		t.Errorf("HDRFileBases(ttl sweep) = %q, want %q", got, want)
	}
	// An old-style sweep (no labels): named by the settings that differ, as the table does.
	got = HDRFileBases(sweepSummary().Results)
	want = []string{"fenced-ttl=500ms-wd=166ms", "fenced-ttl=30s-wd=10s"}
	if !slices.Equal(got, want) {
		t.Errorf("HDRFileBases(unlabeled sweep) = %q, want %q", got, want)
	}
}

func TestFileStemIsSafe(t *testing.T) {
	for name, want := range map[string]string{
		"token":                        "token",
		"token ttl=1s":                 "token-ttl=1s",
		"token wait=backoff:1ms..50ms": "token-wait=backoff_1ms..50ms",
		"../etc/passwd":                "_._etc_passwd",
		".hidden":                      "_hidden",
		"-rf":                          "_rf",
		"  ":                           "result",
		"":                             "result",
		"a\x00b\nc\td":                 "a_b_c_d",
		"fenced ttl=5s wd=1.67s":       "fenced-ttl=5s-wd=1.67s",
		"zk-lock «fair»":               "zk-lock-_fair_",
		strings.Repeat("x", 300):       strings.Repeat("x", maxFileStem),
	} {
		if got := fileStem(name); got != want {
			t.Errorf("fileStem(%q) = %q, want %q", name, got, want)
		}
	}
}
