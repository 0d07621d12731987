package report

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// What the table and markdown reports share: the run description above the results, the
// results' columns, the legend and the notes below them. Everything here is text for
// humans; the machine formats (json, csv) do not use it.

// headerLine is one line of the run description: a label and its text.
type headerLine struct {
	label, text string
}

// runHeader describes the run: tool and start, target, workload, lock options, faults and
// profile. Lines with nothing to say are left out.
func runHeader(s *Summary) []headerLine {
	all := []headerLine{
		{"run", runLine(s)},
		{"target", targetLine(s.Target)},
		{"workload", workloadLine(s.Config)},
		{"lock", lockLine(s.Config)},
		{"faults", strings.Join(s.Config.Faults, "; ")},
		{"profile", s.Config.Profile},
	}
	lines := all[:0]
	for _, l := range all {
		if l.text != "" {
			lines = append(lines, l)
		}
	}
	return lines
}

// runLine is "lockbench VERSION, started RFC3339".
func runLine(s *Summary) string {
	line := strings.TrimSpace(s.Tool + " " + s.Version)
	if !s.StartedAt.IsZero() {
		line += ", started " + s.StartedAt.UTC().Format(time.RFC3339)
	}
	return line
}

// maxAddrs is how many addresses the target line lists before "+N more".
const maxAddrs = 3

// targetLine is "MODE TOPOLOGY ADDR... (Redis VERSION)".
func targetLine(t Target) string {
	parts := []string{t.Mode, t.Topology}
	addrs := t.Addrs
	if len(addrs) > maxAddrs {
		addrs = append(addrs[:maxAddrs:maxAddrs], fmt.Sprintf("+%d more", len(t.Addrs)-maxAddrs))
	}
	parts = append(parts, strings.Join(addrs, ", "))
	if t.RedisVersion != "" {
		parts = append(parts, "(Redis "+t.RedisVersion+")")
	}
	return joinNonEmpty(parts, " ")
}

// workloadLine is workers, keys, hold time, reentry, measured window and pacing.
func workloadLine(c Config) string {
	keys := plural(c.Keys, "key")
	if c.KeyDist != "" {
		keys += " " + c.KeyDist
	}
	hold := c.Hold
	if hold == "" {
		hold = "0s"
	}
	parts := []string{plural(c.Workers, "worker"), keys, "hold " + hold}
	if c.Reentry > 0 {
		parts = append(parts, "reentry "+strconv.Itoa(c.Reentry))
	}
	window := formatSeconds(c.DurationS) + " measured"
	if c.WarmupS > 0 {
		window += " after " + formatSeconds(c.WarmupS) + " warm-up"
	}
	return strings.Join(append(parts, window, pacingText(c)), ", ")
}

// pacingText is "closed loop" or "open loop at RATE/s[, max N in flight]".
func pacingText(c Config) string {
	if c.Rate <= 0 {
		return "closed loop"
	}
	text := "open loop at " + FormatRate(c.Rate) + "/s"
	if c.MaxInflight > 0 {
		text += ", max " + strconv.Itoa(c.MaxInflight) + " in flight"
	}
	return text
}

// lockLine is the lock options: ttl, watchdog, wait policy and acquire timeout.
func lockLine(c Config) string {
	parts := []string{"ttl " + formatMS(c.TTLMS)}
	if c.Watchdog != "" {
		parts = append(parts, "watchdog "+c.Watchdog)
	}
	if c.Wait != "" {
		parts = append(parts, "wait "+c.Wait)
	}
	if c.AcquireTimeoutMS > 0 {
		parts = append(parts, "acquire timeout "+formatMS(c.AcquireTimeoutMS))
	}
	return strings.Join(parts, ", ")
}

// column is one column of the results table after the strategy column.
type column struct {
	header string
	cell   func(r *Result) string
}

// strategyHeader heads the first column, which holds resultLabels.
const strategyHeader = "STRATEGY"

// resultColumns are the table's columns after STRATEGY, all numeric (right-aligned).
// legendLines explains their headers.
func resultColumns() []column {
	acquire := func(r *Result) Percentiles { return r.LatencyUS.Acquire }
	handoff := func(r *Result) Percentiles { return r.LatencyUS.Handoff }
	return []column{
		{"ACQ/S", func(r *Result) string { return FormatRate(r.AcquireRate) }},
		{"P50", latencyCell(acquire, func(p Percentiles) int64 { return p.P50 })},
		{"P99", latencyCell(acquire, func(p Percentiles) int64 { return p.P99 })},
		{"P99.9", latencyCell(acquire, func(p Percentiles) int64 { return p.P999 })},
		{"MAX", latencyCell(acquire, func(p Percentiles) int64 { return p.Max })},
		{"HO P50", latencyCell(handoff, func(p Percentiles) int64 { return p.P50 })},
		{"HO P99", latencyCell(handoff, func(p Percentiles) int64 { return p.P99 })},
		{"TIMEOUTS", func(r *Result) string { return formatCount(r.Timeouts) }},
		{"OVERLAPS", func(r *Result) string { return overlapsCell(r.Safety.Overlaps) }},
		{"LOST", func(r *Result) string { return formatCount(r.Safety.LostLeases) }},
		{"CMD/ACQ", costCell(func(c RedisCost) string { return formatCommands(c.CommandsPerAcquire) })},
		{"CPU/ACQ", costCell(func(c RedisCost) string { return FormatUS(c.CPUUSPerAcquire) })},
		{"JAIN", func(r *Result) string { return measuredCell(r.Fairness.Jain, formatJain) }},
	}
}

// legendLines explain the abbreviated column headers, and the abbreviated settings in the
// result labels when there are any; each line fits in 130 columns.
func legendLines(results []Result) []string {
	lines := []string{
		"ACQ/S acquires per second; P50..MAX acquire latency; HO handoff latency (a release to the next owner's acquire of that key)",
		"OVERLAPS two holders inside one key at once (! = the lock was not exclusive); LOST releases that found their lease gone",
		"CMD/ACQ, CPU/ACQ Redis commands and Redis CPU time per acquire; JAIN fairness across workers (1 = even); - = nothing measured",
	}
	for _, v := range resultVariants() {
		if v.legend != "" && varies(results, v.value) {
			lines = append(lines, v.name+"= "+v.legend)
		}
	}
	return lines
}

// overlapMark follows a non-zero overlap count: a safety violation must stand out.
const overlapMark = " !"

// overlapsCell is the overlap count, marked when non-zero.
func overlapsCell(n uint64) string {
	if n > 0 {
		return formatCount(n) + overlapMark
	}
	return "0"
}

// latencyCell returns a cell function printing one percentile (µs) of one histogram, or "-"
// when that histogram recorded nothing.
func latencyCell(hist func(*Result) Percentiles, pick func(Percentiles) int64) func(*Result) string {
	return func(r *Result) string {
		p := hist(r)
		if p.Count == 0 {
			return "-"
		}
		return FormatUS(float64(pick(p)))
	}
}

// costCell formats a Redis cost, or "-" when the target gave no INFO or nothing was acquired.
func costCell(format func(RedisCost) string) func(*Result) string {
	return func(r *Result) string {
		if !r.Redis.Measured || r.Acquired == 0 {
			return "-"
		}
		return format(r.Redis)
	}
}

// measuredCell formats v, or "-" when v is 0: a cost or fairness of exactly 0 means the
// phase had nothing to measure it on (no acquires, or no INFO from the target).
func measuredCell(v float64, format func(float64) string) string {
	if v == 0 {
		return "-"
	}
	return format(v)
}

// formatCommands formats commands per acquire with one decimal: 4.0.
func formatCommands(v float64) string { return formatFloat(v, 1) }

// formatJain formats Jain's index with two decimals: 0.98.
func formatJain(v float64) string { return formatFloat(v, 2) }

// resultsGrid returns the header and one row per result of the results table.
func resultsGrid(results []Result) (header []string, rows [][]string) {
	cols := resultColumns()
	header = []string{strategyHeader}
	for _, c := range cols {
		header = append(header, c.header)
	}
	labels := resultLabels(results)
	for i := range results {
		row := []string{labels[i]}
		for _, c := range cols {
			row = append(row, c.cell(&results[i]))
		}
		rows = append(rows, row)
	}
	return header, rows
}

// variant is one per-result setting that a sweep may vary.
type variant struct {
	name   string
	legend string // explains name in the legend when it is not self-explanatory
	value  func(r *Result) string
}

// resultVariants are the settings a result label may show, in label order.
func resultVariants() []variant {
	return []variant{
		{"wait", "", func(r *Result) string { return r.Wait }},
		{"ttl", "", func(r *Result) string { return formatMS(r.TTLMS) }},
		{"wd", "watchdog renewal interval", func(r *Result) string {
			if r.WatchdogMS == 0 {
				return "off"
			}
			return formatMS(r.WatchdogMS)
		}},
		{"workers", "", func(r *Result) string { return strconv.Itoa(r.Workers) }},
		{"keys", "", func(r *Result) string { return strconv.Itoa(r.Keys) }},
	}
}

// resultLabels names each result: its strategy, followed by name=value for every setting
// that differs between results (a sweep), e.g. "token ttl=5s wd=1.67s". Settings all
// results share are in the run header instead.
func resultLabels(results []Result) []string {
	labels := make([]string, len(results))
	for i := range results {
		labels[i] = results[i].Strategy
	}
	for _, v := range resultVariants() {
		if !varies(results, v.value) {
			continue
		}
		for i := range results {
			labels[i] += " " + v.name + "=" + v.value(&results[i])
		}
	}
	return labels
}

// varies reports whether value differs between any two results.
func varies(results []Result, value func(*Result) string) bool {
	for i := 1; i < len(results); i++ {
		if value(&results[i]) != value(&results[0]) {
			return true
		}
	}
	return false
}

// noteLines are what a reader must see below the numbers: per result, a phase error and
// counts that have no column; then Summary.Notes; then whether the run was interrupted.
func noteLines(s *Summary) []string {
	var lines []string
	labels := resultLabels(s.Results)
	for i := range s.Results {
		lines = append(lines, resultNotes(labels[i], &s.Results[i])...)
	}
	for _, n := range s.Notes {
		lines = append(lines, "note: "+n)
	}
	if s.Interrupted {
		lines = append(lines, "interrupted: the run was stopped before it finished; the numbers cover only what ran")
	}
	return lines
}

// resultNotes are one result's notes, each prefixed with its label.
func resultNotes(label string, r *Result) []string {
	var lines []string
	if r.Error != "" {
		lines = append(lines, label+": error: "+r.Error+" (the phase did not finish)")
	}
	if r.Interrupted {
		lines = append(lines, label+": interrupted after "+formatSeconds(r.DurationS)+" of measurement")
	}
	for _, n := range r.Notes {
		lines = append(lines, label+": "+n)
	}
	var counts []string
	if r.Errors > 0 {
		counts = append(counts, formatCount(r.Errors)+" Redis or network errors")
	}
	if r.Dropped > 0 {
		counts = append(counts, formatCount(r.Dropped)+" arrivals dropped (no free worker)")
	}
	if r.Safety.StaleFences > 0 {
		counts = append(counts, formatCount(r.Safety.StaleFences)+" stale fencing tokens refused by the resource")
	}
	if len(counts) > 0 {
		lines = append(lines, label+": "+strings.Join(counts, ", "))
	}
	return lines
}

// plural is "1 key", "16 keys".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// joinNonEmpty joins the non-empty parts with sep.
func joinNonEmpty(parts []string, sep string) string {
	kept := parts[:0:0]
	for _, p := range parts {
		if p != "" {
			kept = append(kept, p)
		}
	}
	return strings.Join(kept, sep)
}
