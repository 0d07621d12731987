package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/redistest"
)

// report merge refuses, with exit 2, results that are not the processes of one run: one
// measured on another Redis, one measured a day earlier. The error names the input, how it
// differs and --force, which merges them anyway.
func TestE2EMergeRefusesResultsOfAnotherRunExit2(t *testing.T) {
	t.Parallel()
	srvs := redistest.Start(t, 2)
	dir := t.TempDir()
	runTo := func(name, addr string) string {
		path := filepath.Join(dir, name)
		code, _, stderr := cli("run", "--redis", addr, "-s", "token", "-w", "4", "--rate", "200", "-d", "1s", "--warmup", "0",
			"--format", "json", "--out", path, "-q")
		if code != exitOK {
			t.Fatalf("run: exit %d: %s", code, stderr)
		}
		return path
	}
	a, other := runTo("a.json", srvs[0].Addr), runTo("other.json", srvs[1].Addr)
	same, dayBefore := filepath.Join(dir, "same.json"), filepath.Join(dir, "day-before.json")
	copyResult(t, a, same, 0)
	copyResult(t, a, dayBefore, -24*time.Hour)

	if code, _, stderr := cli("report", "merge", a, same); code != exitUsage || !strings.Contains(stderr, "same process") {
		t.Fatalf("merging a run with itself: exit %d: %s; want 2, refused as the same process twice", code, stderr)
	}
	for _, tc := range []struct {
		file    string
		mention []string
	}{
		{other, []string{"input 2 ran against another target than input 1", "addresses " + srvs[1].Addr, "2 = " + other}},
		{dayBefore, []string{"input 1 started at", "after input 2's run had ended", "did not run together", "2 = " + dayBefore}},
	} {
		code, stdout, stderr := cli("report", "merge", a, tc.file)
		if code != exitUsage || stdout != "" {
			t.Errorf("merge %s: exit %d (want %d), stdout %q", filepath.Base(tc.file), code, exitUsage, stdout)
		}
		for _, m := range append(tc.mention, "--force") {
			if !strings.Contains(stderr, m) {
				t.Errorf("merge %s: stderr does not say %q:\n%s", filepath.Base(tc.file), m, stderr)
			}
		}
		code, stdout, stderr = cli("report", "merge", "--force", a, tc.file)
		if code != exitOK || !strings.Contains(stdout, "merged by force although") {
			t.Errorf("merge --force %s: exit %d, stderr %s; want 0 and a note of what differed:\n%s", filepath.Base(tc.file), code, stderr, stdout)
		}
	}
	if _, stdout, _ := cli("report", "merge", "--help"); !strings.Contains(stdout, "--force") || !strings.Contains(stdout, "same target") {
		t.Errorf("report merge --help does not explain what merge refuses and --force:\n%s", stdout)
	}
}

// copyResult copies the JSON result file from to to, its started_at moved by shift.
func copyResult(t *testing.T, from, to string, shift time.Duration) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	started, err := time.Parse(time.RFC3339, doc["started_at"].(string))
	if err != nil {
		t.Fatal(err)
	}
	doc["started_at"] = started.Add(shift).Format(time.RFC3339Nano)
	if data, err = json.Marshal(doc); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o600); err != nil {
		t.Fatal(err)
	}
}
