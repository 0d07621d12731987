package main

import (
	"os"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/strategies"
)

// docs/strategies.md's table of native waits names every strategy's, as `lockbench
// strategies` shows it: a strategy whose wait changed must change its row there too.
func TestDocsNativeWaitTable(t *testing.T) {
	doc, err := os.ReadFile("docs/strategies.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range strategies.Catalog() {
		row := "| `" + i.Name + "` | " + i.NativeWaitShort() + " | "
		if !strings.Contains(string(doc), row) {
			t.Errorf("docs/strategies.md lacks the native wait row %q...: regenerate it from `lockbench strategies --format json`", row)
		}
	}
}
