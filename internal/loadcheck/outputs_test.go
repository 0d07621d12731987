package loadcheck

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/internal/usage"
)

// -o - is stdout, unless --live - has it; two outputs may not name one file.
func TestPathsCheck(t *testing.T) {
	dir := t.TempDir()
	if out, err := (Paths{Out: "-"}).Check(); err != nil || out != "" {
		t.Errorf("-o -: %q, %v; want stdout (\"\")", out, err)
	}
	_, err := Paths{Out: "-", Live: "-"}.Check()
	want := "--live - and -o - both want stdout, where the NDJSON lines and the report would interleave; give the report a file (-o FILE), or drop -o - (with --live - the report goes to stderr)"
	if err == nil || err.Error() != want || !usage.Is(err) {
		t.Errorf("-o - --live -: %v; want the usage error %q", err, want)
	}
	file := filepath.Join(dir, "r.json")
	if out, err := (Paths{Out: file, Live: "-"}).Check(); err != nil || out != file {
		t.Errorf("-o %s --live -: %q, %v; want the file", file, out, err)
	}
	_, err = Paths{Out: file, HTML: file}.Check()
	if err == nil || !usage.Is(err) || !strings.Contains(err.Error(), "--out and --html name the same file") {
		t.Errorf("--out and --html one file: %v; want a usage error naming both", err)
	}
	_, err = Paths{Live: file, Plot: file}.Check()
	if err == nil || !strings.Contains(err.Error(), "--plot and --live name the same file") {
		t.Errorf("--live and --plot one file: %v; want a usage error naming both", err)
	}
}
