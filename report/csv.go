package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
)

// CSV writes one header row and flat rows (format "csv"), for spreadsheets and scripts: one
// row per result, or for a capacity search (Kind "capacity") one row per step with its
// strategy. Latencies are in µs (columns ending in _us), rates per second, numbers
// unformatted (full precision, no separators). Column names follow the JSON fields.
func CSV(w io.Writer, s *Summary) error {
	var err error
	if s.Kind == KindCapacity {
		err = writeCSV(w, capacityCSVColumns(), capacityRows(s.Capacity))
	} else {
		err = writeCSV(w, csvColumns(), ptrs(s.Results))
	}
	if err != nil {
		return fmt.Errorf("csv report: %w", err)
	}
	return nil
}

// writeCSV writes the header of cols, then one row per item.
func writeCSV[T any](w io.Writer, cols []csvColumn[T], items []*T) error {
	cw := csv.NewWriter(w)
	row := make([]string, len(cols))
	for i, c := range cols {
		row[i] = c.name
	}
	if err := cw.Write(row); err != nil {
		return err
	}
	for _, item := range items {
		for j, c := range cols {
			row[j] = c.value(item)
		}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// ptrs returns pointers to the elements of v.
func ptrs[T any](v []T) []*T {
	p := make([]*T, len(v))
	for i := range v {
		p[i] = &v[i]
	}
	return p
}

// csvColumn is one CSV column: its header and how one row's item (a Result, a capacity
// step) fills it.
type csvColumn[T any] struct {
	name  string
	value func(item *T) string
}

// capacityRow is one step of a capacity search with the search it belongs to.
type capacityRow struct {
	search *Capacity
	index  int // of the step in search.Steps, from 0
}

// capacityRows flattens the searches into one row per step, in order.
func capacityRows(caps []Capacity) []*capacityRow {
	var rows []*capacityRow
	for i := range caps {
		for j := range caps[i].Steps {
			rows = append(rows, &capacityRow{search: &caps[i], index: j})
		}
	}
	return rows
}

// capacityCSVColumns are the columns of a capacity search's CSV: the strategy and its
// answer (repeated on each of its steps, so that every row stands alone), then the step.
func capacityCSVColumns() []csvColumn[capacityRow] {
	step := func(r *capacityRow) *CapacityStep { return &r.search.Steps[r.index] }
	return []csvColumn[capacityRow]{
		{"strategy", func(r *capacityRow) string { return r.search.Strategy }},
		{"slo", func(r *capacityRow) string { return r.search.SLO }},
		{"max_rate_per_s", func(r *capacityRow) string { return csvFloat(r.search.MaxRate) }},
		{"cpu_percent_at_max", func(r *capacityRow) string { return csvFloat(r.search.CPUPercentAtMax) }},
		{"bound", func(r *capacityRow) string { return r.search.Bound }},
		{"client_bound", func(r *capacityRow) string { return strconv.FormatBool(r.search.ClientBound) }},
		{"step", func(r *capacityRow) string { return strconv.Itoa(r.index + 1) }},
		{"stage", func(r *capacityRow) string { return step(r).Stage }},
		{"offered_per_s", func(r *capacityRow) string { return csvFloat(step(r).Offered) }},
		{"achieved_per_s", func(r *capacityRow) string { return csvFloat(step(r).Achieved) }},
		{"dropped", func(r *capacityRow) string { return csvUint(step(r).Dropped) }},
		{"p99_us", func(r *capacityRow) string { return csvInt(step(r).P99US) }},
		{"timeout_ratio", func(r *capacityRow) string { return csvFloat(step(r).TimeoutRate) }},
		{"redis_cpu_percent", func(r *capacityRow) string { return csvFloat(step(r).RedisCPUPercent) }},
		{"lockbench_cpu_percent", func(r *capacityRow) string { return csvFloat(step(r).LockbenchCPUPercent) }},
		{"lockbench_cores", func(r *capacityRow) string { return strconv.Itoa(step(r).LockbenchCores) }},
		{"host_cpu_percent", func(r *capacityRow) string { return csvFloat(step(r).HostCPUPercent) }},
		{"host_steal_percent", func(r *capacityRow) string { return csvFloat(step(r).HostStealPercent) }},
		{"round_trip_us", func(r *capacityRow) string { return csvInt(step(r).RoundTripUS) }},
		{"pass", func(r *capacityRow) string { return strconv.FormatBool(step(r).Pass) }},
		{"reason", func(r *capacityRow) string { return step(r).Reason }},
	}
}

// csvColumns lists the CSV columns in order. Header and rows come from this one list, so
// they cannot drift apart.
func csvColumns() []csvColumn[Result] {
	cols := []csvColumn[Result]{
		{"strategy", func(r *Result) string { return r.Strategy }},
		{"label", func(r *Result) string { return r.Label }},
		{"param_value", func(r *Result) string { return r.ParamValue }},
		{"wait", func(r *Result) string { return r.Wait }},
		{"ttl_ms", func(r *Result) string { return csvInt(r.TTLMS) }},
		{"watchdog_ms", func(r *Result) string { return csvInt(r.WatchdogMS) }},
		{"duration_s", func(r *Result) string { return csvFloat(r.DurationS) }},
		{"workers", func(r *Result) string { return strconv.Itoa(r.Workers) }},
		{"keys", func(r *Result) string { return strconv.Itoa(r.Keys) }},
		{"acquired", func(r *Result) string { return csvUint(r.Acquired) }},
		{"acquire_rate_per_s", func(r *Result) string { return csvFloat(r.AcquireRate) }},
		{"timeouts", func(r *Result) string { return csvUint(r.Timeouts) }},
		{"errors", func(r *Result) string { return csvUint(r.Errors) }},
		{"dropped", func(r *Result) string { return csvUint(r.Dropped) }},
	}
	cols = append(cols, csvLatencyColumns("acquire", func(r *Result) Percentiles { return r.LatencyUS.Acquire })...)
	cols = append(cols, csvLatencyColumns("release", func(r *Result) Percentiles { return r.LatencyUS.Release })...)
	cols = append(cols, csvLatencyColumns("handoff", func(r *Result) Percentiles { return r.LatencyUS.Handoff })...)
	cols = append(cols, csvLatencyColumns("hold", func(r *Result) Percentiles { return r.LatencyUS.Hold })...)
	return append(cols,
		csvColumn[Result]{"overlaps", func(r *Result) string { return csvUint(r.Safety.Overlaps) }},
		csvColumn[Result]{"stale_fences", func(r *Result) string { return csvUint(r.Safety.StaleFences) }},
		csvColumn[Result]{"lost_leases", func(r *Result) string { return csvUint(r.Safety.LostLeases) }},
		csvColumn[Result]{"stuck_keys", func(r *Result) string { return csvUint(r.Safety.StuckKeys) }},
		csvColumn[Result]{"stale_writes", func(r *Result) string { return csvUint(r.Safety.StaleWrites) }},
		csvColumn[Result]{"fence_regressions", func(r *Result) string { return csvUint(r.Safety.FenceRegressions) }},
		csvColumn[Result]{"fence_reuses", func(r *Result) string { return csvUint(r.Safety.FenceReuses) }},
		csvColumn[Result]{"misdeletes", func(r *Result) string { return csvUint(r.Safety.Misdeletes) }},
		csvColumn[Result]{"aborted", func(r *Result) string { return csvUint(r.Safety.Aborted) }},
		csvColumn[Result]{"verdict", func(r *Result) string { return r.Verdict }},
		csvColumn[Result]{"commands_per_acquire", func(r *Result) string { return csvFloat(r.Redis.CommandsPerAcquire) }},
		csvColumn[Result]{"cpu_us_per_acquire", func(r *Result) string { return csvFloat(r.Redis.CPUUSPerAcquire) }},
		csvColumn[Result]{"bytes_per_acquire", func(r *Result) string { return csvFloat(r.Redis.BytesPerAcquire) }},
		csvColumn[Result]{"jain", func(r *Result) string { return csvFloat(r.Fairness.Jain) }},
		csvColumn[Result]{"renewals", func(r *Result) string { return csvUint(r.Renewals) }},
		csvColumn[Result]{"error", func(r *Result) string { return r.Error }},
		// Fairness across processes: empty for a result of one process.
		processColumn("processes", func(p *ProcessFairness) string { return strconv.Itoa(p.Count) }),
		processColumn("processes_jain", func(p *ProcessFairness) string { return csvFloat(p.Jain) }),
		processColumn("processes_min_acquired", func(p *ProcessFairness) string { return csvUint(p.MinAcquired) }),
		processColumn("processes_max_acquired", func(p *ProcessFairness) string { return csvUint(p.MaxAcquired) }),
		processColumn("processes_starved", func(p *ProcessFairness) string { return strconv.Itoa(p.Starved) }),
	)
}

// processColumn is a column of Fairness.Processes, empty when the result has none.
func processColumn(name string, value func(*ProcessFairness) string) csvColumn[Result] {
	return csvColumn[Result]{name, func(r *Result) string {
		if r.Fairness.Processes == nil {
			return ""
		}
		return value(r.Fairness.Processes)
	}}
}

// csvLatencyColumns are NAME_p50_us ... NAME_max_us, NAME_mean_us for one histogram.
func csvLatencyColumns(name string, hist func(*Result) Percentiles) []csvColumn[Result] {
	stat := func(suffix string, value func(Percentiles) string) csvColumn[Result] {
		return csvColumn[Result]{name + "_" + suffix + "_us", func(r *Result) string { return value(hist(r)) }}
	}
	return []csvColumn[Result]{
		stat("p50", func(p Percentiles) string { return csvInt(p.P50) }),
		stat("p90", func(p Percentiles) string { return csvInt(p.P90) }),
		stat("p99", func(p Percentiles) string { return csvInt(p.P99) }),
		stat("p999", func(p Percentiles) string { return csvInt(p.P999) }),
		stat("max", func(p Percentiles) string { return csvInt(p.Max) }),
		stat("mean", func(p Percentiles) string { return csvFloat(p.Mean) }),
	}
}

func csvInt(v int64) string     { return strconv.FormatInt(v, 10) }
func csvUint(v uint64) string   { return strconv.FormatUint(v, 10) }
func csvFloat(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
