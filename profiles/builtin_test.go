package profiles_test

import (
	"bytes"
	"maps"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/profiles"
	"github.com/lockbench/lockbench/report"
	_ "github.com/lockbench/lockbench/services/etcd" // the services profile runs them
	_ "github.com/lockbench/lockbench/services/postgres"
	_ "github.com/lockbench/lockbench/services/zookeeper"
	"github.com/lockbench/lockbench/strategies"
	_ "github.com/lockbench/lockbench/strategies/libs" // the libraries profile runs them
	"github.com/lockbench/lockbench/workload"
)

// Budgets for a built-in's planned run time (phases × (warmup + duration)): every profile
// must be something a user runs on a laptop without planning for it.
const (
	maxPlanned        = 2 * time.Minute
	quickstartPlanMin = 10 * time.Second
	quickstartPlanMax = 15 * time.Second
)

func TestBuiltinsAreListedQuickstartFirst(t *testing.T) {
	infos := profiles.Builtins()
	if len(infos) == 0 || infos[0].Name != "quickstart" {
		t.Fatalf("Builtins() = %v, want quickstart first", infos)
	}
	entries, err := os.ReadDir("builtin")
	if err != nil {
		t.Fatal(err)
	}
	var files, listed []string
	for _, e := range entries {
		files = append(files, strings.TrimSuffix(e.Name(), ".yaml"))
	}
	for _, in := range infos {
		listed = append(listed, in.Name)
	}
	slices.Sort(listed)
	if !slices.Equal(files, listed) {
		t.Errorf("Builtins() lists %v, builtin/ holds %v", listed, files)
	}
}

// TestBuiltinsReadLikeDocumentation checks the opening comment block of every built-in: the
// question it answers first, then what a good result looks like and how to run it.
func TestBuiltinsReadLikeDocumentation(t *testing.T) {
	for _, in := range profiles.Builtins() {
		t.Run(in.Name, func(t *testing.T) {
			p, err := profiles.Load(in.Name)
			if err != nil {
				t.Fatal(err)
			}
			first, _, _ := strings.Cut(p.Doc, "\n")
			if in.Summary == "" || in.Summary != first {
				t.Errorf("Summary %q, want the Doc's first line %q", in.Summary, first)
			}
			if !strings.HasSuffix(first, "?") && !strings.HasSuffix(first, ".") {
				t.Errorf("Doc starts %q: want a question or a statement", first)
			}
			if len(first) > 95 {
				t.Errorf("Summary is %d characters; keep it to one short line", len(first))
			}
			for _, want := range []string{"A good result", "lockbench run --profile " + in.Name} {
				if !strings.Contains(p.Doc, want) {
					t.Errorf("Doc does not say %q", want)
				}
			}
		})
	}
}

// TestBuiltinsNameOnlyTableColumns: a built-in's comment block says which columns of the
// results table to read; every column it names must be one the table prints today.
func TestBuiltinsNameOnlyTableColumns(t *testing.T) {
	var table bytes.Buffer
	s := &report.Summary{Tool: "lockbench", Results: []report.Result{{Strategy: "token"}}}
	if err := report.ResultsTable(&table, s); err != nil {
		t.Fatal(err)
	}
	columns := map[string]bool{}
	for _, line := range strings.Split(table.String(), "\n") {
		if strings.HasPrefix(line, "STRATEGY ") {
			for _, c := range regexp.MustCompile(`\s{2,}`).Split(strings.TrimSpace(line), -1) {
				columns[c] = true
			}
		}
	}
	if !columns["ACQ/S"] || !columns["HO P99"] {
		t.Fatalf("no results table header found in:\n%s", table.String())
	}
	// Capitals in the comments that are not columns: Redis commands, verdicts, acronyms.
	notColumns := map[string]bool{
		"UNSAFE": true, "DEADLOCK": true,
		"SET": true, "NX": true, "GET": true, "DEL": true, "SETNX": true, "EXPIRE": true, "SET/GET": true,
		"PUBLISH": true, "EVALSHA": true, "CPU": true, "CLI": true, "GC": true, "SKU": true,
	}
	word := regexp.MustCompile(`\b(?:HO )?[A-Z][A-Z0-9]+(?:/[A-Z]+|\.[0-9]+)?\b`)
	for _, in := range profiles.Builtins() {
		p, err := profiles.Load(in.Name)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range word.FindAllString(p.Doc, -1) {
			if !columns[w] && !notColumns[w] {
				t.Errorf("%s: the comment names a column %q that the results table does not have (its columns: %s)",
					in.Name, w, strings.Join(slices.Sorted(maps.Keys(columns)), ", "))
			}
		}
	}
}

func TestBuiltinsUseKnownKeysAndStrategies(t *testing.T) {
	known := strategies.Names()
	for _, in := range profiles.Builtins() {
		t.Run(in.Name, func(t *testing.T) {
			p, err := profiles.Load(in.Name)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range p.Values {
				if !slices.Contains(profiles.Keys(), v.Key) {
					t.Errorf("line %d: key %q is not a profile key", v.Line, v.Key)
				}
			}
			for _, s := range planStrategies(p) {
				if !slices.Contains(known, s) {
					t.Errorf("strategy %q is not registered; valid: %v", s, known)
				}
			}
			for _, ph := range p.Phases {
				for _, v := range ph.Values {
					if !slices.Contains(profiles.PhaseKeys(), v.Key) {
						t.Errorf("line %d: key %q is not a phase key", v.Line, v.Key)
					}
				}
			}
		})
	}
}

// TestBuiltinsParseWithTheRunParsers applies every phase's settings through the parsers the
// run flags use and checks each strategy accepts its ttl, watchdog and wait: a built-in must
// never fail with a usage error.
func TestBuiltinsParseWithTheRunParsers(t *testing.T) {
	for _, in := range profiles.Builtins() {
		t.Run(in.Name, func(t *testing.T) {
			p, err := profiles.Load(in.Name)
			if err != nil {
				t.Fatal(err)
			}
			for _, ph := range plan(p) {
				checkPhase(t, ph.strategy, ph.values)
			}
			if s, ok := p.Lookup("topology"); ok && !slices.Contains([]string{"single", "redlock", "sentinel", "cluster"}, s.Value) {
				t.Errorf("topology %q", s.Value)
			}
			if slices.Contains(planStrategies(p), "redlock") {
				if s, _ := p.Lookup("topology"); s.Value != "redlock" {
					t.Errorf("runs redlock without topology: redlock (five masters)")
				}
			}
		})
	}
}

func TestBuiltinsPlannedTime(t *testing.T) {
	for _, in := range profiles.Builtins() {
		t.Run(in.Name, func(t *testing.T) {
			p, err := profiles.Load(in.Name)
			if err != nil {
				t.Fatal(err)
			}
			planned := plannedTime(t, p)
			t.Logf("%s: %d phases, %s", in.Name, len(plan(p)), planned)
			if planned > maxPlanned {
				t.Errorf("planned time %s, want at most %s", planned, maxPlanned)
			}
			if in.Name == "quickstart" && (planned < quickstartPlanMin || planned > quickstartPlanMax) {
				t.Errorf("planned time %s, want %s..%s", planned, quickstartPlanMin, quickstartPlanMax)
			}
		})
	}
}

func TestSourceIsTheEmbeddedFile(t *testing.T) {
	for _, in := range profiles.Builtins() {
		onDisk, err := os.ReadFile("builtin/" + in.Name + ".yaml")
		if err != nil {
			t.Fatal(err)
		}
		src, err := profiles.Source(in.Name)
		if err != nil || !bytes.Equal(src, onDisk) {
			t.Errorf("Source(%q) = %d bytes, %v; want the %d bytes of the file", in.Name, len(src), err, len(onDisk))
		}
		p, err := profiles.Load(in.Name)
		if err != nil || !bytes.Equal(p.Source, onDisk) || p.Name != in.Name {
			t.Errorf("Load(%q): Name %q, %d source bytes, %v", in.Name, p.Name, len(p.Source), err)
		}
	}
}

// phasePlan is one phase a profile runs: its strategy and its settings, top-level ones
// first, the phase's own after them (later wins).
type phasePlan struct {
	strategy string
	values   []profiles.Value
}

// plan expands a profile into the phases it runs, as the CLI does.
func plan(p *profiles.Profile) []phasePlan {
	if len(p.Phases) > 0 {
		out := make([]phasePlan, 0, len(p.Phases))
		for _, ph := range p.Phases {
			out = append(out, phasePlan{ph.Strategy, append(slices.Clone(p.Values), ph.Values...)})
		}
		return out
	}
	var out []phasePlan
	for _, s := range planStrategies(p) {
		out = append(out, phasePlan{s, p.Values})
	}
	return out
}

// planStrategies lists the strategies a profile runs, one per phase.
func planStrategies(p *profiles.Profile) []string {
	if len(p.Phases) > 0 {
		var out []string
		for _, ph := range p.Phases {
			out = append(out, ph.Strategy)
		}
		return out
	}
	v, ok := p.Lookup("strategy")
	switch {
	case !ok:
		return []string{"token"}
	case v.Value == "all":
		return strategies.Names()
	}
	return strings.Split(v.Value, ",")
}

// plannedTime is the profile's run time with the run flags' defaults (warmup 1s, duration
// 10s) where it sets none.
func plannedTime(t *testing.T, p *profiles.Profile) time.Duration {
	t.Helper()
	warmup, duration := time.Second, 10*time.Second
	if v, ok := p.Lookup("warmup"); ok {
		warmup = mustDuration(t, v)
	}
	if v, ok := p.Lookup("duration"); ok {
		duration = mustDuration(t, v)
	}
	return time.Duration(len(plan(p))) * (warmup + duration)
}

func mustDuration(t *testing.T, v profiles.Value) time.Duration {
	t.Helper()
	d, err := time.ParseDuration(v.Value)
	if err != nil {
		t.Fatalf("line %d: %s: %v", v.Line, v.Key, err)
	}
	return d
}

// checkPhase parses a phase's settings with the run flags' parsers and asks the strategy
// whether it accepts its options.
func checkPhase(t *testing.T, strategy string, values []profiles.Value) {
	t.Helper()
	opts := strategies.Options{}
	for _, v := range values {
		var err error
		switch v.Key {
		case "workers", "max-inflight", "keys", "reentry", "permits", "lock-set":
			_, err = strconv.Atoi(v.Value)
		case "rate", "read-ratio":
			_, err = strconv.ParseFloat(v.Value, 64)
		case "duration", "warmup", "acquire-timeout":
			_, err = time.ParseDuration(v.Value)
		case "ttl":
			err = opts.TTL.Set(v.Value)
		case "watchdog":
			opts.Watchdog, err = strategies.ParseWatchdog(v.Value)
		case "wait":
			opts.Wait, err = strategies.ParseWait(v.Value)
		case "hold":
			err = new(workload.Hold).Set(v.Value)
		case "key-dist":
			err = new(workload.KeyDist).Set(v.Value)
		}
		if err != nil {
			t.Errorf("line %d: %s %q: %v", v.Line, v.Key, v.Value, err)
		}
	}
	if err := strategies.Check(strategy, opts); err != nil {
		t.Errorf("strategy %s: %v", strategy, err)
	}
}
