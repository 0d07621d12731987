package report

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

// TestGolden compares the human reports with testdata/*.golden. After an intended change of
// the output, regenerate them with: go test ./report -run Golden -update
func TestGolden(t *testing.T) {
	tests := []struct {
		golden   string
		reporter Reporter
		summary  *Summary
	}{
		{"table.golden", ResultsTable, testSummary()},
		{"table_sweep_interrupted.golden", ResultsTable, sweepSummary()},
		{"markdown.golden", Markdown, testSummary()},
		{"table_kind_sweep.golden", ResultsTable, kindSweepSummary()},
		{"markdown_kind_sweep.golden", Markdown, kindSweepSummary()},
		{"table_capacity.golden", ResultsTable, capacitySummary()},
		{"markdown_capacity.golden", Markdown, capacitySummary()},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			var buf bytes.Buffer
			if err := tt.reporter(&buf, tt.summary); err != nil {
				t.Fatalf("reporter: %v", err)
			}
			path := filepath.Join("testdata", tt.golden)
			if *update {
				if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got := buf.String(); got != string(want) {
				t.Errorf("output differs from %s (run with -update if intended)\n--- got:\n%s\n--- want:\n%s", path, got, want)
			}
		})
	}
}

// TestResultsTableContent checks, independently of the golden file, what a reader must see.
func TestResultsTableContent(t *testing.T) {
	var buf bytes.Buffer
	if err := ResultsTable(&buf, testSummary()); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"target:    spawned single 127.0.0.1:40001 (Redis 7.0.15)",
		"100 workers, 16 keys zipf:1.1, hold exp:2ms, 10s measured after 2s warm-up, closed loop",
		"ttl 10s, watchdog off, wait pubsub, acquire timeout 5s",
		"12.3k", // token acquire rate
		"85µs",  // token acquire p50
		"1.24ms",
		"3.1s",               // set-nx-del acquire max
		"UNSAFE: 3 overlaps", // set-nx-del's verdict stands out
		"1,234",              // set-nx-del timeouts
		"redlock: error: dial tcp 127.0.0.1:40003: connect: connection refused",
		"set-nx-del: 2 lock-server or network errors",
		"note: Redis runs on this machine: latencies exclude a real network",
		"redlock: faults: node-kill:2@3s",
		"redlock: events: 1 — node 2 killed at 3.0s",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "interrupted") {
		t.Errorf("a complete run says interrupted:\n%s", out)
	}
	if strings.Count(out, alarmMark) != 0 {
		t.Errorf("no result left stuck keys, yet the table has %d alarm marks:\n%s", strings.Count(out, alarmMark), out)
	}
	if strings.Contains(out, "overlaps (two holders") {
		t.Errorf("the overlap count is repeated in a note although the verdict says it:\n%s", out)
	}
}

func TestResultsTableSweepInterrupted(t *testing.T) {
	var buf bytes.Buffer
	if err := ResultsTable(&buf, sweepSummary()); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"fenced ttl=500ms wd=166ms",
		"fenced ttl=30s wd=10s",
		"wd= watchdog renewal interval",
		"10.0.0.1:6379, 10.0.0.2:6379, 10.0.0.3:6379, +2 more",
		"open loop at 5k/s, max 200 in flight",
		"UNSAFE: 12 overlaps",
		"safe (fenced)",
		"1 !", // a stuck key
		"321 arrivals dropped",
		"2 stale fencing tokens refused",
		"faults:",
		"interrupted: the run was stopped before it finished; the numbers cover only what ran",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

// TestResultsTableWidth keeps the human table readable in a 130-column terminal. Row names
// are as long as the results' labels make them: the old-style labels derived from two
// varying settings ("fenced ttl=500ms wd=166ms", sweepSummary) may take 10 more.
func TestResultsTableWidth(t *testing.T) {
	tests := []struct {
		summary    *Summary
		maxColumns int
	}{
		{testSummary(), 130},
		{kindSweepSummary(), 130},
		{capacitySummary(), 130},
		{sweepSummary(), 140},
	}
	for _, tt := range tests {
		var buf bytes.Buffer
		if err := ResultsTable(&buf, tt.summary); err != nil {
			t.Fatal(err)
		}
		maxColumns := tt.maxColumns
		for i, line := range strings.Split(buf.String(), "\n") {
			if n := utf8.RuneCountInString(line); n > maxColumns {
				t.Errorf("line %d is %d columns wide, want <= %d: %q", i+1, n, maxColumns, line)
			}
			if strings.HasSuffix(line, " ") {
				t.Errorf("line %d ends with a space: %q", i+1, line)
			}
		}
	}
}

func TestMarkdownEscapesPipes(t *testing.T) {
	s := testSummary()
	s.Results[0].Strategy = "a|b"
	s.Results[2].Error = "x | y\nz"
	var buf bytes.Buffer
	if err := Markdown(&buf, s); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if !strings.Contains(out, `| a\|b |`) {
		t.Errorf("strategy cell not escaped:\n%s", out)
	}
	if !strings.Contains(out, `- redlock: error: x \| y z (the phase did not finish)`) {
		t.Errorf("error note not escaped or not on one line:\n%s", out)
	}
	// Every table row has as many unescaped pipes as the header.
	var cols int
	for _, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(line, "| ") {
			continue
		}
		n := strings.Count(line, "|") - strings.Count(line, `\|`)
		if cols == 0 {
			cols = n
		}
		if n != cols {
			t.Errorf("row has %d cell separators, header %d: %q", n, cols, line)
		}
	}
	if cols != len(resultColumns(nil))+2 {
		t.Errorf("header has %d separators, want %d", cols, len(resultColumns(nil))+2)
	}
}

func TestTableHelper(t *testing.T) {
	var buf bytes.Buffer
	err := Table(&buf, []string{"NAME", "SAFE UNLOCK"}, [][]string{{"token", "yes"}, {"set-nx-del", "no"}})
	if err != nil {
		t.Fatal(err)
	}
	want := "NAME        SAFE UNLOCK\ntoken       yes\nset-nx-del  no\n"
	if got := buf.String(); got != want {
		t.Errorf("Table:\n%q\nwant\n%q", got, want)
	}
}
