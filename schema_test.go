package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lockbench/lockbench/internal/redistest"
	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/schema"
)

// checkResultSchema validates a JSON result against schema/result.json.
func checkResultSchema(data []byte) error { return schema.Validate(schema.Result, data) }

// schemaVersionOf is the document's schema_version, -1 when it has none.
func schemaVersionOf(t *testing.T, data []byte) int {
	t.Helper()
	var head struct {
		SchemaVersion *int `json:"schema_version"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		t.Fatal(err)
	}
	if head.SchemaVersion == nil {
		return -1
	}
	return *head.SchemaVersion
}

// Every JSON output — run, sweep, capacity, report merge and report compare — measured on a
// real redis-server validates against schema/ and carries this release's schema_version.
func TestE2EEveryJSONOutputValidatesSchema(t *testing.T) {
	t.Parallel()
	srv, _ := redistest.Server(t)
	dir := t.TempDir()
	files := map[string]string{}
	for _, tc := range []struct {
		name string
		args []string
	}{
		// At a rate: what is checked is the files' shape, which a few hundred acquires fill
		// as well as the tens of thousands four workers looping at full speed took (both
		// cores for the run's 2.4 s, under the race detector). A closed loop's output is
		// checked by TestE2ERunJSONMatchesSchema.
		{"run", []string{"run", "-s", "token,fenced", "-d", "1200ms", "--rate", "200"}},
		{"sweep", []string{"sweep", "--param", "ttl=1s,5s", "-s", "token", "-d", "300ms", "--rate", "200"}},
		// An objective nothing meets: the search steps down from 40/s to its floor, 10/s.
		{"capacity", []string{"capacity", "-s", "token", "--slo", "p99=1us", "--start", "40", "--step-duration", "200ms"}},
	} {
		path := filepath.Join(dir, tc.name+".json")
		args := append(tc.args, "--redis", srv.Addr, "-w", "4", "--warmup", "0", "-q", "--format", "json", "--out", path)
		if code, _, stderr := cli(args...); code != exitOK {
			t.Fatalf("%s: exit %d: %s", tc.name, code, stderr)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := checkResultSchema(data); err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
		if v := schemaVersionOf(t, data); v != report.SchemaVersion {
			t.Errorf("%s: schema_version %d, want %d", tc.name, v, report.SchemaVersion)
		}
		files[tc.name] = path
	}

	// A second process of the same run, as far as merge can tell: the same result, started
	// a millisecond later (the same file twice is refused as one process given twice).
	twin := filepath.Join(dir, "twin.json")
	copyResult(t, files["run"], twin, time.Millisecond)
	code, merged, stderr := cli("report", "merge", files["run"], twin)
	if code != exitOK {
		t.Fatalf("merge: exit %d: %s", code, stderr)
	}
	if err := checkResultSchema([]byte(merged)); err != nil {
		t.Errorf("merge: %v", err)
	}
	if v := schemaVersionOf(t, []byte(merged)); v != report.SchemaVersion {
		t.Errorf("merge: schema_version %d", v)
	}

	for _, pair := range [][2]string{{files["run"], twin}, {files["capacity"], files["capacity"]}} {
		code, out, stderr := cli("report", "compare", pair[0], pair[1], "--format", "json")
		if code != exitOK {
			t.Fatalf("compare: exit %d: %s", code, stderr)
		}
		if err := schema.Validate(schema.Comparison, []byte(out)); err != nil {
			t.Errorf("compare %s: %v", filepath.Base(pair[0]), err)
		}
		if v := schemaVersionOf(t, []byte(out)); v != report.SchemaVersion || !strings.HasPrefix(out, "{\n  \"tool\": \"lockbench\",") {
			t.Errorf("compare: schema_version %d, header:\n%.120s", v, out)
		}
	}
}

// A result file from before the schema had a version (old field names, no schema_version)
// is still read by report compare and merge; one from a newer schema is refused with exit 2.
func TestE2EReportReadsOlderSchemaRefusesNewer(t *testing.T) {
	t.Parallel()
	srv, _ := redistest.Server(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "now.json")
	if code, _, stderr := cli("run", "--redis", srv.Addr, "-s", "token", "-w", "4", "--rate", "200", "-d", "1s", "--warmup", "0", "-q",
		"--format", "json", "--out", path); code != exitOK {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rewrite := func(name string, edit func(doc map[string]any)) string {
		var doc map[string]any
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		edit(doc)
		b, _ := json.Marshal(doc)
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	old := rewrite("old.json", func(doc map[string]any) {
		delete(doc, "schema_version")
		if started, err := time.Parse(time.RFC3339Nano, doc["started_at"].(string)); err == nil {
			doc["started_at"] = started.Add(time.Millisecond).Format(time.RFC3339Nano) // another process
		}
		r := doc["results"].([]any)[0].(map[string]any)
		r["acquire_rate"] = r["acquire_rate_per_s"]
		delete(r, "acquire_rate_per_s")
		delete(r, "intervals")
	})
	code, out, stderr := cli("report", "compare", old, path, "--format", "json")
	if code != exitOK {
		t.Fatalf("compare old new: exit %d: %s", code, stderr)
	}
	var c report.Comparison
	if err := json.Unmarshal([]byte(out), &c); err != nil {
		t.Fatal(err)
	}
	for _, m := range c.Rows[0].Metrics {
		if m.Metric == "acquire_rate_per_s" && (m.A == 0 || m.A != m.B) {
			t.Errorf("the old file's acquire_rate was not read: %+v", m)
		}
	}
	if code, _, stderr := cli("report", "merge", old, path); code != exitOK {
		t.Errorf("merge old new: exit %d: %s", code, stderr)
	}
	newer := rewrite("newer.json", func(doc map[string]any) { doc["schema_version"] = report.SchemaVersion + 1 })
	code, _, stderr = cli("report", "compare", newer, path)
	if code != exitUsage || !strings.Contains(stderr, "newer lockbench") || !strings.Contains(stderr, "newer.json") {
		t.Errorf("compare of a newer schema: exit %d, stderr %s; want 2 naming the file", code, stderr)
	}
}

// The .hlog of a real run, read back with hdrhistogram-go's log reader: every second has
// the four tags, values in ns; per tag, the seconds add up to exactly the JSON's counts,
// and their percentiles are the JSON's µs × 1000 (to within the histograms' 0.1%). report
// merge --hdr-dir writes the merged log from the per-second histograms the JSON carries.
func TestE2EHDRLogReadsBackEveryTagInNanoseconds(t *testing.T) {
	t.Parallel()
	srv, _ := redistest.Server(t)
	dir := t.TempDir()
	jsonPath, hdrDir := filepath.Join(dir, "r.json"), filepath.Join(dir, "hdr")
	// Eight workers on one key with 1ms holds: they queue, so handoffs happen.
	if code, _, stderr := cli("run", "--redis", srv.Addr, "-s", "token", "-w", "8", "--hold", "1ms", "-d", "2500ms", "--warmup", "0",
		"-q", "--format", "json", "--out", jsonPath, "--hdr-dir", hdrDir); code != exitOK {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	s, err := readSummary(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	r := s.Results[0]
	if len(r.Intervals) != len(r.Timeline) || len(r.Intervals) < 2 {
		t.Fatalf("%d intervals in the JSON, %d timeline seconds", len(r.Intervals), len(r.Timeline))
	}
	perTag := checkHLOGFile(t, filepath.Join(hdrDir, "token.hlog"), len(r.Intervals))
	want := map[string]report.Percentiles{
		"acquire": r.LatencyUS.Acquire, "release": r.LatencyUS.Release, "handoff": r.LatencyUS.Handoff, "hold": r.LatencyUS.Hold,
	}
	for _, tag := range report.HLOGTags {
		h, p := perTag[tag], want[tag]
		if uint64(h.TotalCount()) != p.Count || p.Count == 0 {
			t.Errorf("%s: the log's seconds hold %d values, the JSON counts %d", tag, h.TotalCount(), p.Count)
			continue
		}
		for _, q := range []struct {
			name     string
			ns, want int64
		}{
			{"p50", h.ValueAtQuantile(50), p.P50}, {"p99", h.ValueAtQuantile(99), p.P99}, {"max", h.Max(), p.Max},
		} {
			if d := math.Abs(float64(q.ns)/1000 - float64(q.want)); d > float64(q.want)*0.001+1 {
				t.Errorf("%s %s: %d ns in the log, %d µs in the JSON", tag, q.name, q.ns, q.want)
			}
		}
	}

	twin := filepath.Join(dir, "twin.json")
	copyResult(t, jsonPath, twin, time.Millisecond)
	mergedDir := filepath.Join(dir, "merged")
	if code, _, stderr := cli("report", "merge", jsonPath, twin, "--hdr-dir", mergedDir); code != exitOK {
		t.Fatalf("merge: exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(mergedDir, "token.hgrm")); err != nil {
		t.Error(err)
	}
	mergedTag := checkHLOGFile(t, filepath.Join(mergedDir, "token.hlog"), len(r.Intervals))
	for _, tag := range report.HLOGTags {
		if got, one := mergedTag[tag].TotalCount(), perTag[tag].TotalCount(); got != 2*one {
			t.Errorf("merged %s: %d values, want twice one process's %d", tag, got, one)
		}
	}
}

// checkHLOGFile reads an .hlog with hdrhistogram-go's reader and checks its shape: the
// header's unit and millisecond StartTime, seconds × (acquire untagged, then the four tags)
// in order. It returns, per tag, the seconds' histograms added up.
func checkHLOGFile(t *testing.T, path string, seconds int) map[string]*hdrhistogram.Histogram {
	t.Helper()
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"latencies in nanoseconds", "#[StartTime: ", "#[BaseTime: "} {
		if !bytes.Contains(text, []byte(want)) {
			t.Errorf("%s: no %q in:\n%.500s", path, want, text)
		}
	}
	if i := bytes.Index(text, []byte("#[StartTime: ")); i >= 0 {
		var sec, ms int64
		if _, err := fmt.Sscanf(string(text[i+len("#[StartTime: "):]), "%d.%03d", &sec, &ms); err != nil || sec == 0 {
			t.Errorf("%s: StartTime is not seconds with milliseconds (%v): %.60s", path, err, text[i:])
		}
	}
	reader := hdrhistogram.NewHistogramLogReader(bytes.NewReader(text))
	sums := map[string]*hdrhistogram.Histogram{}
	lineTags := append([]string{""}, report.HLOGTags...) // "": HistogramLogProcessor's default
	n := 0
	for {
		h, err := reader.NextIntervalHistogram()
		if err != nil {
			t.Fatalf("%s: interval %d: %v", path, n, err)
		}
		if h == nil {
			break
		}
		if want := lineTags[n%len(lineTags)]; h.Tag() != want {
			t.Errorf("%s: histogram %d tagged %q, want %q", path, n, h.Tag(), want)
		}
		if sums[h.Tag()] == nil {
			sums[h.Tag()] = hdrhistogram.New(1, report.HighestUS*1000, report.SignificantDigits)
		}
		sums[h.Tag()].Merge(h)
		n++
	}
	if n != seconds*len(lineTags) {
		t.Errorf("%s: %d interval histograms, want %d seconds × (1 untagged + %d tags)", path, n, seconds, len(report.HLOGTags))
	}
	if u, a := sums[""], sums["acquire"]; u == nil || a == nil || u.TotalCount() != a.TotalCount() {
		t.Errorf("%s: the untagged intervals are not the acquire ones", path)
	}
	for _, tag := range report.HLOGTags {
		if sums[tag] == nil {
			t.Fatalf("%s: no %s intervals", path, tag)
		}
	}
	return sums
}
