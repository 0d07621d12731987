package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
)

// CSV writes one header row and one row per result with flat columns (format "csv"), for
// spreadsheets and scripts. Latencies are in µs (columns ending in _us), rates per second,
// numbers unformatted (full precision, no separators). Column names follow the JSON fields.
func CSV(w io.Writer, s *Summary) error {
	cols := csvColumns()
	cw := csv.NewWriter(w)
	header := make([]string, len(cols))
	for i, c := range cols {
		header[i] = c.name
	}
	if err := cw.Write(header); err != nil {
		return fmt.Errorf("csv report: %w", err)
	}
	row := make([]string, len(cols))
	for i := range s.Results {
		for j, c := range cols {
			row[j] = c.value(&s.Results[i])
		}
		if err := cw.Write(row); err != nil {
			return fmt.Errorf("csv report: %w", err)
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("csv report: %w", err)
	}
	return nil
}

// csvColumn is one CSV column: its header and how a result fills it.
type csvColumn struct {
	name  string
	value func(r *Result) string
}

// csvColumns lists the CSV columns in order. Header and rows come from this one list, so
// they cannot drift apart.
func csvColumns() []csvColumn {
	cols := []csvColumn{
		{"strategy", func(r *Result) string { return r.Strategy }},
		{"wait", func(r *Result) string { return r.Wait }},
		{"ttl_ms", func(r *Result) string { return csvInt(r.TTLMS) }},
		{"watchdog_ms", func(r *Result) string { return csvInt(r.WatchdogMS) }},
		{"duration_s", func(r *Result) string { return csvFloat(r.DurationS) }},
		{"workers", func(r *Result) string { return strconv.Itoa(r.Workers) }},
		{"keys", func(r *Result) string { return strconv.Itoa(r.Keys) }},
		{"acquired", func(r *Result) string { return csvUint(r.Acquired) }},
		{"acquire_rate", func(r *Result) string { return csvFloat(r.AcquireRate) }},
		{"timeouts", func(r *Result) string { return csvUint(r.Timeouts) }},
		{"errors", func(r *Result) string { return csvUint(r.Errors) }},
		{"dropped", func(r *Result) string { return csvUint(r.Dropped) }},
	}
	cols = append(cols, csvLatencyColumns("acquire", func(r *Result) Percentiles { return r.LatencyUS.Acquire })...)
	cols = append(cols, csvLatencyColumns("release", func(r *Result) Percentiles { return r.LatencyUS.Release })...)
	cols = append(cols, csvLatencyColumns("handoff", func(r *Result) Percentiles { return r.LatencyUS.Handoff })...)
	cols = append(cols, csvLatencyColumns("hold", func(r *Result) Percentiles { return r.LatencyUS.Hold })...)
	return append(cols,
		csvColumn{"overlaps", func(r *Result) string { return csvUint(r.Safety.Overlaps) }},
		csvColumn{"stale_fences", func(r *Result) string { return csvUint(r.Safety.StaleFences) }},
		csvColumn{"lost_leases", func(r *Result) string { return csvUint(r.Safety.LostLeases) }},
		csvColumn{"commands_per_acquire", func(r *Result) string { return csvFloat(r.Redis.CommandsPerAcquire) }},
		csvColumn{"cpu_us_per_acquire", func(r *Result) string { return csvFloat(r.Redis.CPUUSPerAcquire) }},
		csvColumn{"bytes_per_acquire", func(r *Result) string { return csvFloat(r.Redis.BytesPerAcquire) }},
		csvColumn{"jain", func(r *Result) string { return csvFloat(r.Fairness.Jain) }},
		csvColumn{"renewals", func(r *Result) string { return csvUint(r.Renewals) }},
		csvColumn{"error", func(r *Result) string { return r.Error }},
	)
}

// csvLatencyColumns are NAME_p50_us ... NAME_max_us, NAME_mean_us for one histogram.
func csvLatencyColumns(name string, hist func(*Result) Percentiles) []csvColumn {
	stat := func(suffix string, value func(Percentiles) string) csvColumn {
		return csvColumn{name + "_" + suffix + "_us", func(r *Result) string { return value(hist(r)) }}
	}
	return []csvColumn{
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
