package profiles_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/profiles"
)

const fullProfile = `# Does the parser keep everything?
#
# Second paragraph.

strategy: [token, fenced]
workers: 2000
rate: 1e3
max-inflight: 1_000
keys: 10000
key-dist: zipf:1.1
hold: exp:1ms
reentry: 0
duration: 5s
warmup: 0
acquire-timeout: 1s
ttl: 500ms
watchdog: off
wait: backoff:1ms..20ms
topology: single
faults:
  - holder-pause:p=0.05,d=600ms
  - "client-skew:d=2s"
`

func TestLoadPathKeepsOrderLinesAndText(t *testing.T) {
	path := writeFile(t, "full.yaml", fullProfile)
	p, err := profiles.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != path || string(p.Source) != fullProfile {
		t.Errorf("Name %q, Source %d bytes; want the path and the file", p.Name, len(p.Source))
	}
	if want := "Does the parser keep everything?\n\nSecond paragraph."; p.Doc != want {
		t.Errorf("Doc = %q, want %q", p.Doc, want)
	}
	want := []profiles.Value{
		{"strategy", "token,fenced", 5},
		{"workers", "2000", 6},
		{"rate", "1000", 7},
		{"max-inflight", "1000", 8},
		{"keys", "10000", 9},
		{"key-dist", "zipf:1.1", 10},
		{"hold", "exp:1ms", 11},
		{"reentry", "0", 12},
		{"duration", "5s", 13},
		{"warmup", "0", 14},
		{"acquire-timeout", "1s", 15},
		{"ttl", "500ms", 16},
		{"watchdog", "off", 17},
		{"wait", "backoff:1ms..20ms", 18},
		{"topology", "single", 19},
	}
	if !slices.Equal(p.Values, want) {
		t.Errorf("Values =\n%v\nwant\n%v", p.Values, want)
	}
	wantFaults := []profiles.Value{
		{"fault", "holder-pause:p=0.05,d=600ms", 21},
		{"fault", "client-skew:d=2s", 22},
	}
	if !slices.Equal(p.Faults, wantFaults) {
		t.Errorf("Faults = %v, want %v", p.Faults, wantFaults)
	}
	if p.Phases != nil {
		t.Errorf("Phases = %v, want none", p.Phases)
	}
}

func TestPhases(t *testing.T) {
	src := `# Phases.
workers: 24
faults: [a]
phases:
  - strategy: token
    label: wd=off
    watchdog: "off"
  - {strategy: token, watchdog: auto, ttl: 2s}
  - label: fenced
    strategy: fenced
    faults:
      - holder-pause:p=0.1,d=1s
`
	p, err := profiles.Parse("phases.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := []profiles.Phase{
		{Line: 5, Strategy: "token", Label: "wd=off", Values: []profiles.Value{{"watchdog", "off", 7}}},
		{Line: 8, Strategy: "token", Values: []profiles.Value{{"watchdog", "auto", 8}, {"ttl", "2s", 8}}},
		{Line: 9, Strategy: "fenced", Label: "fenced", Faults: []profiles.Value{{"fault", "holder-pause:p=0.1,d=1s", 12}}},
	}
	if len(p.Phases) != len(want) {
		t.Fatalf("Phases = %+v, want %+v", p.Phases, want)
	}
	for i, ph := range p.Phases {
		w := want[i]
		if ph.Line != w.Line || ph.Strategy != w.Strategy || ph.Label != w.Label ||
			!slices.Equal(ph.Values, w.Values) || !slices.Equal(ph.Faults, w.Faults) {
			t.Errorf("phase %d = %+v, want %+v", i, ph, w)
		}
	}
	if !slices.Equal(p.Values, []profiles.Value{{"workers", "24", 2}}) || len(p.Faults) != 1 {
		t.Errorf("top level: Values %v, Faults %v", p.Values, p.Faults)
	}
}

func TestStrategyForms(t *testing.T) {
	for src, want := range map[string]string{
		"strategy: token":                 "token",
		"strategy: token, fenced":         "token,fenced",
		"strategy: 'token,,fenced'":       "token,fenced",
		"strategy: all":                   "all",
		"strategy: [token, fenced]":       "token,fenced",
		"strategy:\n  - token\n  - fair":  "token,fair",
		"strategy: [reentrant-hash]":      "reentrant-hash",
		"x: &s token\nstrategy: *s":       "", // x is unknown: an error, see below
		"strategy: &s [token, fenced]\n":  "token,fenced",
		"strategy: \"  token , fair  \"":  "token,fair",
		"strategy: [ \" token \", fair ]": "token,fair",
	} {
		p, err := profiles.Parse("s.yaml", []byte(src))
		if want == "" {
			if err == nil {
				t.Errorf("%q: want an error", src)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", src, err)
			continue
		}
		if v, _ := p.Lookup("strategy"); v.Value != want {
			t.Errorf("%q: strategy %q, want %q", src, v.Value, want)
		}
	}
}

// TestErrors checks each kind of mistake is reported with its line and field, and a message
// that says what is valid.
func TestErrors(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		line      int
		field     string
		msg       string // a substring of Error()
	}{
		{"unknown key", "workers: 10\nwokers: 20\n", 2, "",
			`profile bad.yaml line 2: unknown field "wokers" (did you mean "workers"?); valid: strategy, workers, rate,`},
		{"unknown key, no suggestion", "colour: blue\n", 1, "", `unknown field "colour"; valid: strategy,`},
		{"unknown phase key", "phases:\n  - strategy: token\n    tll: 5s\n", 3, "phases[0]",
			`line 3: field phases[0]: unknown field "tll" (did you mean "ttl"?); valid: strategy, label, workers, rate, keys, hold, read-ratio, permits, lock-set, ttl,`},
		{"top-level key in a phase", "phases:\n  - strategy: token\n    duration: 5s\n", 3, "phases[0]",
			`field "duration" cannot differ by phase: set it at the top level; valid in a phase: strategy, label,`},
		{"duplicate key", "workers: 10\nkeys: 5\nworkers: 20\n", 3, "", `duplicate field "workers" (first set at line 1)`},
		{"duplicate phase key", "phases:\n  - strategy: token\n    strategy: fenced\n", 3, "phases[0]", `duplicate field "strategy" (first set at line 2)`},
		{"int is a word", "workers: lots\n", 1, "workers", `field workers: needs a whole number, e.g. workers: 100; found the string "lots"`},
		{"int is quoted", "keys: \"5\"\n", 1, "keys", `found the string "5"`},
		{"int is a float", "keys: 2.5\n", 1, "keys", `needs a whole number, e.g. keys: 1000; found 2.5`},
		{"int is empty", "workers:\n", 1, "workers", `found no value`},
		{"int is a list", "workers: [1, 2]\n", 1, "workers", `found a list`},
		{"rate is a word", "rate: fast\n", 1, "rate", `needs a number, e.g. rate: 5000; found the string "fast"`},
		{"rate is infinite", "rate: .inf\n", 1, "rate", `needs a number`},
		{"bare number duration", "duration: 5\n", 1, "duration",
			`profile bad.yaml line 1: field duration: 5 is not a duration: a number needs a unit, e.g. "5s" or "5ms"`},
		{"quoted bare number duration", "ttl: \"30\"\n", 1, "ttl", `30 is not a duration: a number needs a unit`},
		{"unparsable duration", "warmup: 1s\nduration: \"5 parsecs\"\n", 2, "duration",
			`"5 parsecs" is not a duration; write a number with a unit (ns, us, ms, s, m, h), e.g. "10s" or "1m30s"`},
		{"duration is a mapping", "ttl: {s: 5}\n", 1, "ttl", `needs a duration such as 10s; found a mapping`},
		{"phase duration", "phases:\n  - strategy: token\n    ttl: 3\n", 3, "phases[0].ttl", `3 is not a duration`},
		{"text is a list", "hold: [1ms]\n", 1, "hold", `needs a value such as exp:1ms; found a list`},
		{"text is empty", "wait: \"\"\n", 1, "wait", `found an empty string`},
		{"strategy is a mapping", "strategy: {a: b}\n", 1, "strategy", `needs strategy names, e.g. token,fenced or [token, fenced] or all; found a mapping`},
		{"strategy list holds a list", "strategy:\n  - token\n  - [fair]\n", 3, "strategy[1]", `needs one strategy name, e.g. token; found a list`},
		{"strategy list is empty", "strategy: []\n", 1, "strategy", `needs strategy names`},
		{"phase without strategy", "workers: 5\nphases:\n  - strategy: token\n  - label: lonely\n    ttl: 5s\n", 4, "phases[1]",
			`line 4: field phases[1]: a phase needs a strategy, e.g. - strategy: token`},
		{"phase with two strategies", "phases:\n  - strategy: token,fenced\n", 2, "phases[0].strategy", `names one strategy, found "token,fenced"`},
		{"phase with all", "phases:\n  - strategy: all\n", 2, "phases[0].strategy", `names one strategy, found "all"`},
		{"phase is a string", "phases:\n  - token\n", 2, "phases[0]", `a phase is a mapping such as {strategy: token, watchdog: auto}; found the string "token"`},
		{"two phases with one label", "phases:\n  - strategy: token\n    label: a\n  - strategy: fenced\n    label: a\n  - strategy: token\n    ttl: 5s\n    label: a\n", 8, "phases[2].label",
			`profile bad.yaml line 8: field phases[2].label: "a" is the label of the token phase at line 2 too: give each phase of a strategy its own`},
		{"phases not a list", "phases: token\n", 1, "phases", `must be a list of one or more phases`},
		{"phases empty", "phases: []\n", 1, "phases", `must be a list of one or more phases`},
		{"phases with strategy", "strategy: token\nworkers: 5\nphases:\n  - strategy: fenced\n", 1, "strategy",
			`profile bad.yaml line 1: field strategy: cannot be set together with phases: each phase names its own strategy`},
		{"faults not a list", "faults: holder-pause:p=0.05,d=600ms\n", 1, "faults",
			`field faults: must be a list of fault specs, e.g. ["holder-pause:p=0.05,d=600ms"]; found the string "holder-pause:p=0.05,d=600ms"`},
		{"fault not a string", "faults:\n  - a\n  - {p: 1}\n", 3, "faults[1]", `needs a fault spec such as "holder-pause:p=0.05,d=600ms"; found a mapping`},
		{"phase faults not a list", "phases:\n  - strategy: token\n    faults: x\n", 3, "phases[0].faults", `must be a list of fault specs`},
		{"key is a list", "[a]: 1\n", 1, "", `a field name is a plain word such as workers; found a list`},
		{"not a mapping", "just some prose,\nnot settings\n", 1, "",
			`profile bad.yaml line 1: not a profile: want settings such as "workers: 100", one per line; found the string "just some prose, not settings"`},
		{"a list", "- workers: 5\n", 1, "", `not a profile: want settings such as "workers: 100", one per line; found a list`},
		{"bad YAML", "workers: 5\nkeys: [1,\n", 2, "", `profile bad.yaml line 2: not valid YAML: did not find expected node content`},
		{"bad YAML indentation", "workers: 5\nkeys: 1\n  hold: 1ms\n", 3, "", `not valid YAML: mapping values are not allowed in this context`},
		{"binary", "workers: 5\n\x00\xff\xfe\x00\x01", 2, "", `line 2: not a text file (invalid UTF-8); a profile is YAML text`},
		{"two documents", "workers: 5\n---\nkeys: 1\n", 2, "", `a second YAML document starts here`},
		{"empty", "", 0, "", `profile bad.yaml: has no settings`},
		{"only comments", "# nothing here\n", 0, "", `has no settings`},
		{"empty mapping", "{}\n", 0, "", `has no settings`},
		{"unknown alias", "workers: *nope\n", 0, "", `not valid YAML: unknown anchor 'nope' referenced`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := profiles.Parse("bad.yaml", []byte(tc.src))
			if err == nil {
				t.Fatalf("no error; parsed %+v", p)
			}
			var pe *profiles.Error
			if !errors.As(err, &pe) {
				t.Fatalf("error %T %v, want *profiles.Error", err, err)
			}
			if pe.Line != tc.line || pe.Field != tc.field || pe.Profile != "bad.yaml" {
				t.Errorf("line %d field %q profile %q; want line %d field %q\n%v", pe.Line, pe.Field, pe.Profile, tc.line, tc.field, err)
			}
			if !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error\n  %v\nwant it to contain\n  %s", err, tc.msg)
			}
		})
	}
}

func TestUnknownBuiltinListsTheValidNames(t *testing.T) {
	for _, name := range []string{"quickstrat", "", "../quickstart", "hot.key"} {
		_, err := profiles.Load(name)
		var pe *profiles.Error
		if !errors.As(err, &pe) {
			t.Fatalf("Load(%q): %v, want *profiles.Error", name, err)
		}
		want := `unknown profile "` + name + `"; valid: quickstart, hot-key, flash-sale,`
		if name == "../quickstart" {
			want = "cannot read the file" // it has a '/': a path
		}
		if !strings.HasPrefix(err.Error(), want) && !strings.Contains(err.Error(), want) {
			t.Errorf("Load(%q): %v\nwant %s...", name, err, want)
		}
		if _, err := profiles.Source(name); err == nil {
			t.Errorf("Source(%q): no error", name)
		}
	}
}

func TestMissingFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "nope.yaml")
	_, err := profiles.Load(path)
	var pe *profiles.Error
	if !errors.As(err, &pe) || !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Load(missing): %v, want a *profiles.Error wrapping fs.ErrNotExist", err)
	}
	if want := "profile " + path + ": cannot read the file: no such file or directory"; err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
	_, err = profiles.Load("quickstart.yaml") // a built-in's name written as a file name
	if err == nil || !strings.Contains(err.Error(), "for the built-in profile, use --profile quickstart") {
		t.Errorf("Load(quickstart.yaml): %v, want a hint at the built-in", err)
	}
	if _, err := profiles.Load(dir + "/"); err == nil {
		t.Error("Load(a directory): no error")
	}
}

func TestErrorFormat(t *testing.T) {
	for _, tc := range []struct {
		e    profiles.Error
		want string
	}{
		{profiles.Error{Profile: "p.yaml", Line: 7, Field: "workers", Msg: "bad"}, "profile p.yaml line 7: field workers: bad"},
		{profiles.Error{Profile: "p.yaml", Line: 7, Msg: "bad"}, "profile p.yaml line 7: bad"},
		{profiles.Error{Profile: "p.yaml", Msg: "bad"}, "profile p.yaml: bad"},
		{profiles.Error{Msg: `unknown profile "x"`}, `unknown profile "x"`},
	} {
		if got := tc.e.Error(); got != tc.want {
			t.Errorf("got %q, want %q", got, tc.want)
		}
	}
}

func TestErrorAtKeepsTheLine(t *testing.T) {
	p, err := profiles.Parse("x.yaml", []byte("workers: 5\nwatchdog: sometimes\n"))
	if err != nil {
		t.Fatal(err)
	}
	v, ok := p.Lookup("watchdog")
	if !ok {
		t.Fatal("no watchdog")
	}
	cause := errors.New(`invalid watchdog "sometimes": valid: off, auto`)
	err = p.ErrorAt(v, cause)
	if want := `profile x.yaml line 2: field watchdog: invalid watchdog "sometimes": valid: off, auto`; err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
	if !errors.Is(err, cause) {
		t.Error("ErrorAt does not wrap the cause")
	}
}

func TestDocIsTheOpeningCommentBlock(t *testing.T) {
	src := "\n# Title?\n#\n#   indented stays indented\n#no space\n\n# a comment about workers\nworkers: 5 # trailing\n"
	p, err := profiles.Parse("d.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if want := "Title?\n\n  indented stays indented\nno space"; p.Doc != want {
		t.Errorf("Doc = %q, want %q", p.Doc, want)
	}
	p, err = profiles.Parse("d.yaml", []byte("workers: 5\n# not a doc\n"))
	if err != nil || p.Doc != "" {
		t.Errorf("Doc = %q, %v; want none", p.Doc, err)
	}
}

// FuzzParse checks that no input makes Parse panic, and that every failure is an *Error.
func FuzzParse(f *testing.F) {
	for _, in := range profiles.Builtins() {
		src, _ := profiles.Source(in.Name)
		f.Add(src)
	}
	f.Add([]byte(fullProfile))
	f.Add([]byte("phases:\n  - {strategy: token, faults: [a, b]}\n  - *x\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		_, err := profiles.Parse("fuzz.yaml", src)
		var pe *profiles.Error
		if err != nil && !errors.As(err, &pe) {
			t.Errorf("error %T %v, want *profiles.Error", err, err)
		}
	})
}

func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
