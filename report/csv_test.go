package report

import (
	"bytes"
	"encoding/csv"
	"slices"
	"strconv"
	"testing"
)

func TestCSVRoundTrip(t *testing.T) {
	s := testSummary()
	s.Results[2].Error = `refused, "quoted"` + "\nsecond line" // must survive quoting
	var buf bytes.Buffer
	if err := CSV(&buf, s); err != nil {
		t.Fatal(err)
	}
	records, err := csv.NewReader(&buf).ReadAll() // ReadAll also fails on ragged rows
	if err != nil {
		t.Fatalf("parse CSV: %v", err)
	}
	if len(records) != 1+len(s.Results) {
		t.Fatalf("%d records, want a header and %d rows", len(records), len(s.Results))
	}
	header := records[0]
	for _, name := range []string{"strategy", "acquire_p50_us", "acquire_mean_us", "handoff_max_us", "hold_p999_us", "overlaps", "jain", "error"} {
		if !slices.Contains(header, name) {
			t.Errorf("header lacks %q: %v", name, header)
		}
	}
	col := func(name string) int { return slices.Index(header, name) }
	for i, rec := range records[1:] {
		if len(rec) != len(header) {
			t.Errorf("row %d has %d fields, header %d", i, len(rec), len(header))
		}
		if rec[col("strategy")] != s.Results[i].Strategy {
			t.Errorf("row %d strategy = %q, want %q", i, rec[col("strategy")], s.Results[i].Strategy)
		}
	}
	setnx := records[2]
	checks := map[string]string{
		"acquire_p99_us":       "5600",
		"acquire_mean_us":      "480",
		"acquire_rate_per_s":   "9876.5",
		"timeouts":             "1234", // raw, no thousands separator
		"overlaps":             "3",
		"lost_leases":          "5",
		"commands_per_acquire": "3.1",
	}
	for name, want := range checks {
		if got := setnx[col(name)]; got != want {
			t.Errorf("set-nx-del %s = %q, want %q", name, got, want)
		}
	}
	if rate, err := strconv.ParseFloat(records[1][col("acquire_rate_per_s")], 64); err != nil || rate != 12345.6 {
		t.Errorf("token acquire_rate = %v (%v), want 12345.6", rate, err)
	}
	if got := records[3][col("error")]; got != s.Results[2].Error {
		t.Errorf("error = %q, want %q", got, s.Results[2].Error)
	}
}
