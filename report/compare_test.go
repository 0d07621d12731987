package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/schema"
)

// metricOf finds one metric of the row named name.
func metricOf(t *testing.T, c *Comparison, name, metric string) MetricChange {
	t.Helper()
	for _, row := range c.Rows {
		if row.Name != name {
			continue
		}
		for _, m := range row.Metrics {
			if m.Metric == metric {
				return m
			}
		}
	}
	t.Fatalf("comparison has no %s %s: %+v", name, metric, c.Rows)
	return MetricChange{}
}

func TestCompareFlagsRegression(t *testing.T) {
	a, b := testSummary(), testSummary()
	b.Results[0].AcquireRate = a.Results[0].AcquireRate * 0.8                            // -20%
	b.Results[0].LatencyUS.Acquire.P99 = a.Results[0].LatencyUS.Acquire.P99 * 13 / 10    // +30%
	b.Results[0].Redis.CommandsPerAcquire = a.Results[0].Redis.CommandsPerAcquire * 1.05 // +5%: within 10%
	c, err := Compare(a, b, CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Threshold != DefaultCompareThreshold {
		t.Errorf("threshold = %v, want the default %v", c.Threshold, DefaultCompareThreshold)
	}
	rate := metricOf(t, c, "token", "acquire_rate_per_s")
	if !rate.Regression || !rate.Comparable || rate.Ratio < 0.799 || rate.Ratio > 0.801 {
		t.Errorf("acquire_rate = %+v, want a regression with ratio 0.8", rate)
	}
	if p99 := metricOf(t, c, "token", "acquire_p99_us"); !p99.Regression {
		t.Errorf("acquire_p99_us = %+v, want a regression", p99)
	}
	if cmds := metricOf(t, c, "token", "commands_per_acquire"); cmds.Regression {
		t.Errorf("commands_per_acquire +5%% flagged at a 10%% threshold: %+v", cmds)
	}
	if len(c.Regressions) != 2 {
		t.Errorf("regressions = %q, want 2 (rate and p99)", c.Regressions)
	}
	for _, want := range []string{"token: acquires/s 12.3k -> 9.88k (x0.80, down more than 10%)", "token: acquire p99 1.24ms -> 1.61ms (x1.30, up more than 10%)"} {
		if !containsLine(c.Regressions, want) {
			t.Errorf("regressions lack %q: %q", want, c.Regressions)
		}
	}
}

func TestCompareImprovementIsNoRegression(t *testing.T) {
	a, b := testSummary(), testSummary()
	for i := range b.Results {
		r := &b.Results[i]
		r.AcquireRate *= 2
		r.LatencyUS.Acquire.P50 /= 2
		r.LatencyUS.Acquire.P99 /= 2
		r.LatencyUS.Acquire.P999 /= 2
		r.LatencyUS.Handoff.P99 /= 2
		r.Redis.CommandsPerAcquire /= 2
		r.Redis.CPUUSPerAcquire /= 2
	}
	c, err := Compare(a, b, CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Regressions) != 0 {
		t.Errorf("an improvement was flagged: %q", c.Regressions)
	}
	if m := metricOf(t, c, "token", "acquire_p99_us"); m.Ratio != 0.5 {
		t.Errorf("p99 ratio = %v, want 0.5", m.Ratio)
	}
}

func TestCompareThreshold(t *testing.T) {
	a, b := testSummary(), testSummary()
	b.Results[0].LatencyUS.Acquire.P50 = a.Results[0].LatencyUS.Acquire.P50 * 115 / 100 // +15%
	tests := []struct {
		threshold float64
		regressed bool
	}{
		{0, true},     // default 10%
		{0.10, true},  // 15% > 10%
		{0.20, false}, // 15% < 20%
	}
	for _, tt := range tests {
		c, err := Compare(a, b, CompareOptions{Threshold: tt.threshold})
		if err != nil {
			t.Fatal(err)
		}
		if got := metricOf(t, c, "token", "acquire_p50_us").Regression; got != tt.regressed {
			t.Errorf("threshold %v: p50 +15%% regression = %v, want %v", tt.threshold, got, tt.regressed)
		}
	}
	if _, err := Compare(a, b, CompareOptions{Threshold: -0.1}); err == nil {
		t.Errorf("a negative threshold was accepted")
	}
}

// TestCompareSafety: overlaps or stuck keys where A had none always regress, whatever the
// threshold; more where A already had some is not a new failure.
func TestCompareSafety(t *testing.T) {
	a, b := testSummary(), testSummary()
	b.Results[0].Safety.Overlaps = 1 // token had none
	b.Results[0].Safety.StuckKeys = 2
	b.Results[1].Safety.Overlaps = 300 // set-nx-del already had 3
	c, err := Compare(a, b, CompareOptions{Threshold: 100})
	if err != nil {
		t.Fatal(err)
	}
	if !metricOf(t, c, "token", "overlaps").Regression || !metricOf(t, c, "token", "stuck_keys").Regression {
		t.Errorf("new overlaps or stuck keys not flagged: %q", c.Regressions)
	}
	if metricOf(t, c, "set-nx-del", "overlaps").Regression {
		t.Errorf("set-nx-del already overlapped in A; flagged anyway")
	}
	if !containsLine(c.Regressions, "token: overlaps 0 -> 1 (A had none)") {
		t.Errorf("regressions = %q", c.Regressions)
	}
}

func TestCompareUnmatched(t *testing.T) {
	a, b := testSummary(), testSummary()
	b.Results[2].Strategy = "fair"          // redlock only in A, fair only in B
	b.Results[1].Label = "set-nx-del wd=1s" // a different phase
	c, err := Compare(a, b, CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(c.OnlyA, ",") != "set-nx-del,redlock" || strings.Join(c.OnlyB, ",") != "set-nx-del wd=1s,fair" {
		t.Errorf("only A %q, only B %q", c.OnlyA, c.OnlyB)
	}
	if len(c.Rows) != 1 || c.Rows[0].Name != "token" {
		t.Errorf("rows = %+v, want token only", c.Rows)
	}
	var buf bytes.Buffer
	if err := ComparisonTable(&buf, c); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"only in A: set-nx-del, redlock", "only in B: set-nx-del wd=1s, fair", "no regressions (threshold 10%)"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("comparison table lacks %q:\n%s", want, buf.String())
		}
	}
}

// TestCompareUnmeasured: a metric one run did not measure (no handoffs, no INFO) is shown as
// "-" and never regresses.
func TestCompareUnmeasured(t *testing.T) {
	a, b := testSummary(), testSummary()
	b.Results[0].Redis = RedisCost{} // B ran against a target without INFO
	c, err := Compare(a, b, CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	m := metricOf(t, c, "token", "cpu_us_per_acquire")
	if m.Comparable || m.Regression || m.BMeasured || !m.AMeasured {
		t.Errorf("cpu_us_per_acquire = %+v, want measured by A only, not comparable", m)
	}
	if h := metricOf(t, c, "redlock", "handoff_p99_us"); h.AMeasured || h.Comparable {
		t.Errorf("redlock had no handoffs: %+v", h)
	}
	if _, err := json.Marshal(c); err != nil {
		t.Errorf("a comparison does not encode as JSON: %v", err)
	}
}

func TestCompareCapacity(t *testing.T) {
	a, b := capacitySummary(), capacitySummary()
	b.Capacity[0].MaxRate = 30000
	c, err := Compare(a, b, CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !metricOf(t, c, "token", "max_rate_per_s").Regression {
		t.Errorf("max rate 42.1k -> 30k not flagged: %+v", c.Rows)
	}
	if _, err := Compare(a, testSummary(), CompareOptions{}); err == nil || !strings.Contains(err.Error(), "capacity") {
		t.Errorf("comparing a capacity search with a run: err = %v, want a capacity error", err)
	}
}

func TestComparisonTable(t *testing.T) {
	a, b := testSummary(), testSummary()
	b.Version = "v0.2.0"
	b.Results[0].LatencyUS.Acquire.P99 = 2000
	c, err := Compare(a, b, CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := ComparisonTable(&buf, c); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"A:  lockbench v0.1.0, started 2025-03-01T10:00:00Z",
		"B:  lockbench v0.2.0",
		"STRATEGY    METRIC",
		"1.24ms     2ms  1.61  REGRESSION",
		"1 regression (threshold 10%):\n  token: acquire p99 1.24ms -> 2ms",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("comparison table lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "REGRESSION"); n != 1 {
		t.Errorf("%d rows marked, want 1:\n%s", n, out)
	}
	for i, line := range strings.Split(out, "\n") {
		if strings.HasSuffix(line, " ") {
			t.Errorf("line %d ends with a space: %q", i+1, line)
		}
	}
}

// containsLine reports whether lines holds want.
func containsLine(lines []string, want string) bool {
	for _, l := range lines {
		if l == want {
			return true
		}
	}
	return false
}

// ComparisonJSON opens with the header every lockbench document has and validates against
// schema/comparison.json, for runs and for capacity searches, with and without rows.
func TestComparisonJSONSchema(t *testing.T) {
	for name, pair := range map[string][2]*Summary{
		"runs":     {testSummary(), testSummary()},
		"capacity": {capacitySummary(), capacitySummary()},
		"disjoint": {testSummary(), {Tool: "lockbench"}},
	} {
		c, err := Compare(pair[0], pair[1], CompareOptions{})
		if err != nil {
			t.Fatal(err)
		}
		c.Version = "v1.2.3"
		var buf bytes.Buffer
		if err := ComparisonJSON(&buf, c); err != nil {
			t.Fatal(err)
		}
		if err := schema.Validate(schema.Comparison, buf.Bytes()); err != nil {
			t.Errorf("%s: %v\n%s", name, err, buf.Bytes())
		}
		var head struct {
			Tool          string `json:"tool"`
			SchemaVersion int    `json:"schema_version"`
			Kind          string `json:"kind"`
			Version       string `json:"version"`
		}
		if err := json.Unmarshal(buf.Bytes(), &head); err != nil || head.Tool != "lockbench" ||
			head.SchemaVersion != SchemaVersion || head.Kind != KindComparison || head.Version != "v1.2.3" {
			t.Errorf("%s: header %+v (%v)", name, head, err)
		}
		if !strings.HasPrefix(buf.String(), "{\n  \"tool\": \"lockbench\",\n  \"schema_version\": 1,") {
			t.Errorf("%s: does not open with the header:\n%.100s", name, buf.String())
		}
	}
}

// A sweep compares only with a sweep of the same parameter, a run with a run: side by side,
// their phases' names match nothing and the comparison read "no regressions".
func TestCompareRefusesDifferentKinds(t *testing.T) {
	run := testSummary()
	sweep := testSummary()
	sweep.Kind, sweep.Sweep = KindSweep, &Sweep{Param: "workers", Values: []string{"1", "10"}}
	other := testSummary()
	other.Kind, other.Sweep = KindSweep, &Sweep{Param: "keys", Values: []string{"1", "10"}}
	for _, tc := range []struct {
		a, b *Summary
		want string
	}{
		{sweep, run, "A is a sweep, B a run"},
		{run, sweep, "A is a run, B a sweep"},
		{sweep, other, "A sweeps workers, B sweeps keys"},
	} {
		if _, err := Compare(tc.a, tc.b, CompareOptions{}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Compare: %v; want an error saying %q", err, tc.want)
		}
	}
	if _, err := Compare(sweep, sweep, CompareOptions{}); err != nil {
		t.Errorf("Compare of a sweep with itself: %v", err)
	}
}
