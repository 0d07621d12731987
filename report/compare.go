package report

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
)

// DefaultCompareThreshold is the relative change Compare counts as a regression when
// CompareOptions.Threshold is 0: 0.10 = 10%.
const DefaultCompareThreshold = 0.10

// CompareOptions tunes Compare.
type CompareOptions struct {
	// Threshold is the relative change that makes a regression: the acquire rate falling,
	// or a latency or a Redis cost rising, by more than Threshold (0.10 = 10%). Default
	// (0): DefaultCompareThreshold. Negative is an error.
	Threshold float64
}

// KindComparison is Comparison.Kind.
const KindComparison = "comparison"

// Comparison is run B measured against run A (the baseline), result by result. Its JSON
// (ComparisonJSON) opens with the same header as a result's, and schema/comparison.json
// describes it.
type Comparison struct {
	Tool          string `json:"tool" jsonschema:"enum=lockbench"`
	SchemaVersion int    `json:"schema_version"` // see SchemaVersion
	Kind          string `json:"kind" jsonschema:"enum=comparison"`
	Version       string `json:"version"` // of the lockbench that compared; Compare leaves it to the caller

	A string `json:"a"` // run A as the results table's header names it
	B string `json:"b"`
	// Threshold is the relative change that counts as a regression: 0.10 = 10%.
	Threshold float64 `json:"threshold_ratio"`
	// Rows hold the results both runs have, in A's order.
	Rows []ComparisonRow `json:"rows"`
	// OnlyA and OnlyB name the results only one run has.
	OnlyA []string `json:"only_a,omitempty"`
	OnlyB []string `json:"only_b,omitempty"`
	// Regressions describe every metric that regressed, one line each; empty when none did.
	Regressions []string `json:"regressions"`
}

// ComparisonRow compares one result (or, for capacity searches, one strategy's answer).
type ComparisonRow struct {
	Name    string         `json:"name"` // strategy and label, as the results table names it
	Metrics []MetricChange `json:"metrics"`
}

// MetricChange is one metric in both runs. Metric names follow the CSV columns.
type MetricChange struct {
	Metric string  `json:"metric"` // e.g. acquire_rate_per_s, acquire_p99_us, overlaps
	A      float64 `json:"a"`
	B      float64 `json:"b"`
	// AMeasured and BMeasured say whether each run measured the metric at all (a phase
	// without handoffs, a target without INFO did not); an unmeasured value is 0.
	AMeasured bool `json:"a_measured"`
	BMeasured bool `json:"b_measured"`
	// Ratio is B/A; 0 when the metric is not comparable (A is 0, or a side did not measure
	// it: no handoffs, no INFO from the target).
	Ratio      float64 `json:"ratio"`
	Comparable bool    `json:"comparable"`
	Regression bool    `json:"regression"`
}

// better says which way a metric improves.
type better int

const (
	higherIsBetter better = iota
	lowerIsBetter
	noneIsBetter // a failure count: any where the baseline had none is a regression
)

// metric is one compared metric: how to read it from a result and how to show it.
type metric struct {
	name   string // as in MetricChange.Metric
	title  string // for people
	better better
	value  func(r *Result) float64
	valid  func(r *Result) bool // whether r measured it
	format func(float64) string
}

// resultMetrics are the metrics compared per result, in display order.
func resultMetrics() []metric {
	always := func(*Result) bool { return true }
	hasAcquires := func(r *Result) bool { return r.LatencyUS.Acquire.Count > 0 }
	hasHandoffs := func(r *Result) bool { return r.LatencyUS.Handoff.Count > 0 }
	hasCost := func(r *Result) bool { return r.Redis.Measured && r.Acquired > 0 }
	us := func(v int64) float64 { return float64(v) }
	count := func(v float64) string { return formatCount(uint64(v)) }
	return []metric{
		{"acquire_rate_per_s", "acquires/s", higherIsBetter, func(r *Result) float64 { return r.AcquireRate }, always, FormatRate},
		{"acquire_p50_us", "acquire p50", lowerIsBetter, func(r *Result) float64 { return us(r.LatencyUS.Acquire.P50) }, hasAcquires, FormatUS},
		{"acquire_p99_us", "acquire p99", lowerIsBetter, func(r *Result) float64 { return us(r.LatencyUS.Acquire.P99) }, hasAcquires, FormatUS},
		{"acquire_p999_us", "acquire p99.9", lowerIsBetter, func(r *Result) float64 { return us(r.LatencyUS.Acquire.P999) }, hasAcquires, FormatUS},
		{"handoff_p99_us", "handoff p99", lowerIsBetter, func(r *Result) float64 { return us(r.LatencyUS.Handoff.P99) }, hasHandoffs, FormatUS},
		{"commands_per_acquire", "Redis commands/acquire", lowerIsBetter, func(r *Result) float64 { return r.Redis.CommandsPerAcquire }, hasCost, formatCommands},
		{"cpu_us_per_acquire", "Redis CPU/acquire", lowerIsBetter, func(r *Result) float64 { return r.Redis.CPUUSPerAcquire }, hasCost, FormatUS},
		{"overlaps", "overlaps", noneIsBetter, func(r *Result) float64 { return float64(r.Safety.Overlaps) }, always, count},
		{"stuck_keys", "stuck keys", noneIsBetter, func(r *Result) float64 { return float64(r.Safety.StuckKeys) }, always, count},
		{"misdeletes", "misdeletes", noneIsBetter, func(r *Result) float64 { return float64(r.Safety.Misdeletes) }, always, count},
		{"fence_regressions", "fence regressions", noneIsBetter, func(r *Result) float64 { return float64(r.Safety.FenceRegressions) }, always, count},
		{"stale_writes", "stale writes", noneIsBetter, func(r *Result) float64 { return float64(r.Safety.StaleWrites) }, always, count},
	}
}

// capacityMetrics are the metrics compared per capacity search. They read a Result built
// by capacityAsResult.
func capacityMetrics() []metric {
	always := func(*Result) bool { return true }
	return []metric{
		{"max_rate_per_s", "max acquires/s in SLO", higherIsBetter, func(r *Result) float64 { return r.AcquireRate }, always, FormatRate},
		{"cpu_percent_at_max", "Redis CPU at max", lowerIsBetter, func(r *Result) float64 { return r.Redis.CPUPercent },
			func(r *Result) bool { return r.Redis.CPUPercent > 0 }, formatPercent},
	}
}

// metricByName finds a metric for the comparison reporter.
func metricByName(name string) (metric, bool) {
	for _, m := range append(resultMetrics(), capacityMetrics()...) {
		if m.name == name {
			return m, true
		}
	}
	return metric{}, false
}

// Compare measures run b against run a (the baseline): per result, matched by strategy and
// label, the ratio B/A of the acquire rate, acquire p50/p99/p99.9, handoff p99 and Redis
// commands and CPU per acquire. A regression is the rate falling, or a latency or cost
// rising, by more than opt.Threshold; overlaps or stuck keys where A had none are always
// one. Capacity searches compare their answers (max rate in SLO, Redis CPU there). A run
// cannot be compared with a capacity search.
func Compare(a, b *Summary, opt CompareOptions) (*Comparison, error) {
	if a == nil || b == nil {
		return nil, errors.New("compare: missing run")
	}
	if opt.Threshold < 0 {
		return nil, fmt.Errorf("compare: threshold %v is negative", opt.Threshold)
	}
	if opt.Threshold == 0 {
		opt.Threshold = DefaultCompareThreshold
	}
	// A sweep's phases are named by their swept values, a run's by strategy and label:
	// side by side, nothing would match and the comparison would read "no regressions".
	if ka, kb := summaryKind(a), summaryKind(b); ka != kb {
		return nil, fmt.Errorf("compare: A is a %s, B a %s: compare a run with a run, a sweep with a sweep, a capacity search with a capacity search", ka, kb)
	}
	if a.Sweep != nil && b.Sweep != nil && a.Sweep.Param != b.Sweep.Param {
		return nil, fmt.Errorf("compare: A sweeps %s, B sweeps %s: compare sweeps of the same parameter", a.Sweep.Param, b.Sweep.Param)
	}
	c := &Comparison{
		Tool: "lockbench", SchemaVersion: SchemaVersion, Kind: KindComparison,
		A: runLine(a), B: runLine(b), Threshold: opt.Threshold, Regressions: []string{},
	}
	ra, rb, metrics := a.Results, b.Results, resultMetrics()
	if a.Kind == KindCapacity {
		ra, rb, metrics = capacityAsResults(a.Capacity), capacityAsResults(b.Capacity), capacityMetrics()
	}
	c.compareResults(ra, rb, metrics)
	return c, nil
}

// compareResults fills c's rows, unmatched names and regressions.
func (c *Comparison) compareResults(ra, rb []Result, metrics []metric) {
	ka, kb := resultKeys(ra), resultKeys(rb)
	for i, k := range ka {
		j := slices.Index(kb, k)
		if j < 0 {
			c.OnlyA = append(c.OnlyA, k.String())
			continue
		}
		row := ComparisonRow{Name: k.String()}
		for _, m := range metrics {
			mc := compareMetric(m, &ra[i], &rb[j], c.Threshold)
			row.Metrics = append(row.Metrics, mc)
			if mc.Regression {
				c.Regressions = append(c.Regressions, regressionLine(row.Name, m, mc, c.Threshold))
			}
		}
		c.Rows = append(c.Rows, row)
	}
	for _, k := range kb {
		if !slices.Contains(ka, k) {
			c.OnlyB = append(c.OnlyB, k.String())
		}
	}
}

// compareMetric compares one metric of a and b.
func compareMetric(m metric, a, b *Result, threshold float64) MetricChange {
	mc := MetricChange{Metric: m.name, AMeasured: m.valid(a), BMeasured: m.valid(b)}
	if mc.AMeasured {
		mc.A = m.value(a)
	}
	if mc.BMeasured {
		mc.B = m.value(b)
	}
	if mc.AMeasured && mc.BMeasured && mc.A != 0 {
		mc.Comparable = true
		mc.Ratio = mc.B / mc.A
	}
	switch m.better {
	case noneIsBetter:
		mc.Regression = mc.A == 0 && mc.B > 0
	case higherIsBetter:
		mc.Regression = mc.Comparable && mc.Ratio < 1-threshold
	case lowerIsBetter:
		mc.Regression = mc.Comparable && mc.Ratio > 1+threshold
	}
	return mc
}

// regressionLine describes a regression: "token: acquire p99 1.24ms -> 1.61ms (x1.30, more
// than +10%)".
func regressionLine(name string, m metric, mc MetricChange, threshold float64) string {
	line := name + ": " + m.title + " " + m.format(mc.A) + " -> " + m.format(mc.B)
	switch m.better {
	case noneIsBetter:
		return line + " (A had none)"
	case higherIsBetter:
		return line + " (x" + formatRatio(mc.Ratio) + ", down more than " + formatPercent(threshold*100) + ")"
	default:
		return line + " (x" + formatRatio(mc.Ratio) + ", up more than " + formatPercent(threshold*100) + ")"
	}
}

// ComparisonJSON writes c as indented JSON with a trailing newline, as schema/comparison.json
// describes it; schema_version is always SchemaVersion. Lists left nil are written as [].
func ComparisonJSON(w io.Writer, c *Comparison) error {
	out := *c
	out.SchemaVersion = SchemaVersion
	out.Rows = make([]ComparisonRow, len(c.Rows))
	for i, r := range c.Rows {
		r.Metrics = nonNil(r.Metrics)
		out.Rows[i] = r
	}
	out.Regressions = nonNil(out.Regressions)
	return writeJSON(w, &out, "comparison report")
}

// capacityAsResults turns capacity answers into results the capacity metrics read: the
// strategy as the name, MaxRate as AcquireRate, CPUPercentAtMax as Redis.CPUPercent.
func capacityAsResults(caps []Capacity) []Result {
	rs := make([]Result, len(caps))
	for i, c := range caps {
		rs[i] = Result{Strategy: c.Strategy, AcquireRate: c.MaxRate, Redis: RedisCost{CPUPercent: c.CPUPercentAtMax}}
	}
	return rs
}

// formatRatio formats B/A with two decimals: 0.74, 1.30.
func formatRatio(r float64) string { return strconv.FormatFloat(r, 'f', 2, 64) }

// regressionMark flags a regressed metric in the comparison table.
const regressionMark = "REGRESSION"

// ComparisonTable writes c for a person: the two runs, a table with one row per metric of
// each matched result (A, B, B/A, marked when it regressed), the results only one run has,
// and the regressions or that there were none.
func ComparisonTable(w io.Writer, c *Comparison) error {
	var buf bytes.Buffer
	writeRunHeader(&buf, []headerLine{{"A", c.A}, {"B", c.B}})
	buf.WriteByte('\n')
	g := comparisonGrid(c)
	if err := renderTable(&buf, g.header, g.rows, g.alignment()); err != nil {
		return fmt.Errorf("comparison report: %w", err)
	}
	buf.WriteByte('\n')
	if len(c.OnlyA) > 0 {
		buf.WriteString("only in A: " + joinNonEmpty(c.OnlyA, ", ") + "\n")
	}
	if len(c.OnlyB) > 0 {
		buf.WriteString("only in B: " + joinNonEmpty(c.OnlyB, ", ") + "\n")
	}
	threshold := formatPercent(c.Threshold * 100)
	if len(c.Regressions) == 0 {
		buf.WriteString("no regressions (threshold " + threshold + ")\n")
	} else {
		buf.WriteString(plural(len(c.Regressions), "regression") + " (threshold " + threshold + "):\n")
		for _, r := range c.Regressions {
			buf.WriteString("  " + r + "\n")
		}
	}
	if _, err := w.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("comparison report: %w", err)
	}
	return nil
}

// comparisonGrid is the comparison table: each result's name on its first row only.
func comparisonGrid(c *Comparison) grid {
	g := grid{
		header: []string{strategyHeader, "METRIC", "A", "B", "B/A", ""},
		text:   []bool{true, true, false, false, false, true},
	}
	for _, row := range c.Rows {
		for i, mc := range row.Metrics {
			name := ""
			if i == 0 {
				name = row.Name
			}
			g.rows = append(g.rows, metricRow(name, mc))
		}
	}
	return g
}

// metricRow is one row of the comparison table.
func metricRow(name string, mc MetricChange) []string {
	m, ok := metricByName(mc.Metric)
	if !ok {
		m = metric{title: mc.Metric, format: func(v float64) string { return csvFloat(v) }}
	}
	cell := func(v float64, measured bool) string {
		if !measured {
			return "-"
		}
		return m.format(v)
	}
	ratio, mark := "-", ""
	if mc.Comparable {
		ratio = formatRatio(mc.Ratio)
	}
	if mc.Regression {
		mark = regressionMark
	}
	return []string{name, m.title, cell(mc.A, mc.AMeasured), cell(mc.B, mc.BMeasured), ratio, mark}
}
