package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/lockbench/lockbench/schema"
)

// TestSchemaFilesUpToDate: the checked-in schemas are what the generator makes of the Go
// types today, so that they cannot drift from what lockbench writes.
func TestSchemaFilesUpToDate(t *testing.T) {
	docs, err := generate(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != len(schema.Names) {
		t.Fatalf("generated %d files, package schema embeds %d", len(docs), len(schema.Names))
	}
	for i, d := range docs {
		if d.name != schema.Names[i] {
			t.Errorf("generated %s, package schema expects %s", d.name, schema.Names[i])
		}
		have, err := os.ReadFile(filepath.Join("..", d.name))
		if err != nil {
			t.Fatalf("%v: run go generate ./schema", err)
		}
		if !bytes.Equal(have, d.text) {
			t.Errorf("schema/%s differs from what the Go types give: run go generate ./schema and check in the result", d.name)
		}
	}
}

// TestGenerateIsDeterministic: two runs give the same bytes (no map order leaks in).
func TestGenerateIsDeterministic(t *testing.T) {
	a, err := generate(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	b, err := generate(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	for i := range a {
		if !bytes.Equal(a[i].text, b[i].text) {
			t.Errorf("%s: two runs differ", a[i].name)
		}
	}
}
