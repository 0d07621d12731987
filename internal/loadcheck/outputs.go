// Package loadcheck holds the checks a load command (run, sweep, capacity) makes of what the
// user gave before anything runs: its output files, --max-errors, and the service flags a run
// would ignore. A bad value found after a 90-second run, or silently replaced by a default,
// is worse than an error at once. The load settings' own checks are workload's (Settings,
// Config.Validate); package main binds the flags and calls these.
package loadcheck

import (
	"os"
	"path/filepath"

	"github.com/lockbench/lockbench/internal/output"
	"github.com/lockbench/lockbench/internal/usage"
)

// Output is an output file a flag names.
type Output struct{ Flag, Path string }

// Outputs makes sure the files can be written, by creating them now — before a long run is
// lost to a typo in a path — and that no two of them are one file. A file that did not exist
// is removed again; hdrDir, when given, is created.
func Outputs(files []Output, hdrDir string) error {
	seen := map[string]string{}
	for _, p := range files {
		if p.Path == "" {
			continue
		}
		abs, err := filepath.Abs(p.Path)
		if err == nil {
			if other, dup := seen[abs]; dup {
				return usage.Errorf("--%s and --%s name the same file %s: each output needs its own", other, p.Flag, p.Path)
			}
			seen[abs] = p.Flag
		}
		if err := output.ProbeFile(p.Path); err != nil {
			return usage.Errorf("--%s %s: cannot be written: %v", p.Flag, p.Path, output.UnwrapPath(err))
		}
	}
	if hdrDir != "" {
		if err := os.MkdirAll(hdrDir, 0o755); err != nil {
			return usage.Errorf("--hdr-dir %s: cannot be created: %v", hdrDir, output.UnwrapPath(err))
		}
		if err := output.ProbeFile(filepath.Join(hdrDir, ".lockbench-probe")); err != nil {
			return usage.Errorf("--hdr-dir %s: cannot be written: %v", hdrDir, output.UnwrapPath(err))
		}
	}
	return nil
}

// Paths are a load command's output flags: the report (--out, - for stdout), --live (- for
// stdout), --plot, --html, the profiles and --hdr-dir.
type Paths struct {
	Out, Live, Plot, HTML, CPUProfile, MemProfile, HDRDir string
}

// Check makes sure the report and its extra files can be written, and that no two of them
// are one file (Outputs); --live - and -o - cannot both have stdout. out is where the
// report goes: the file, or "" for stdout (-o - is stdout, as for most tools).
func (p Paths) Check() (out string, err error) {
	out = p.Out
	if out == "-" {
		if p.Live == "-" {
			return "", usage.Errorf("--live - and -o - both want stdout, where the NDJSON lines and the report would interleave; give the report a file (-o FILE), or drop -o - (with --live - the report goes to stderr)")
		}
		out = ""
	}
	files := []Output{{Flag: "out", Path: out}, {Flag: "plot", Path: p.Plot}, {Flag: "html", Path: p.HTML}, {Flag: "cpuprofile", Path: p.CPUProfile}, {Flag: "memprofile", Path: p.MemProfile}}
	if p.Live != "-" {
		files = append(files, Output{Flag: "live", Path: p.Live})
	}
	return out, Outputs(files, p.HDRDir)
}
