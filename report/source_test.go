package report

import (
	"bytes"
	"strings"
	"testing"
)

// A library measured as shipped names itself and its version below the numbers; a lock of
// lockbench's own does not (its source is a seed article, in the catalog); a merge keeps it.
func TestTableNamesLibraryVersion(t *testing.T) {
	s := &Summary{Tool: "lockbench", Config: Config{Workers: 4, Keys: 1, Wait: "native"}, Results: []Result{
		{Strategy: "driver:drivers/node/redlock.js", Wait: OwnText, Own: []string{"wait", "watchdog"}, Source: "npm redlock 4.2.0", Acquired: 10},
		{Strategy: "token", Wait: "native", Source: "seed 003", Acquired: 10},
	}}
	var out bytes.Buffer
	if err := ResultsTable(&out, s); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "driver:drivers/node/redlock.js wait=own: library: npm redlock 4.2.0") || strings.Contains(out.String(), "seed 003") {
		t.Errorf("want the library's version below the numbers, and no line for token:\n%s", out.String())
	}
	m, err := mergeResult([]*Result{&s.Results[0], &s.Results[0]})
	if err != nil || m.Source != "npm redlock 4.2.0" {
		t.Errorf("merged source %q (%v): want the phase's", m.Source, err)
	}
}
