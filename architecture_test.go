package main

import (
	"encoding/json"
	"errors"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/schema"
	"github.com/lockbench/lockbench/services"
	"github.com/lockbench/lockbench/strategies"
)

// The growth table of docs/architecture.md says which files a new strategy, library,
// service or setting touches. The tests below keep it true: a child process of this test
// binary registers one more strategy, as a new strategy, library or service would, and runs
// the guard tests that pin the registries to checked-in files; each guard that fails then is
// a step the table's rows must name, and each one that no longer fails is a step too many.
// The registries are checked directly for the rest: every service package is imported by
// internal/builtin and has its server installed by scripts/test.sh, and every file the
// table names exists.

// probeEnv, set in the child's environment, registers probeName before the tests run.
const (
	probeEnv  = "LOCKBENCH_ARCHITECTURE_PROBE"
	probeName = "architecture-probe"
)

func init() {
	if os.Getenv(probeEnv) == "" {
		return
	}
	strategies.Register(strategies.Info{
		Name:       probeName,
		Summary:    "a strategy registered by the architecture test's child process",
		Source:     "architecture_test.go",
		NativeWait: "retry at once: a probe",
		Weakness:   "none: it builds nothing",
	}, func(strategies.Info, strategies.Options) (strategies.Strategy, error) {
		return nil, errors.New("the architecture probe builds nothing")
	})
}

// strategyGuards are the tests that fail when a strategy is registered and nothing else is
// done, each with the step that makes it pass again, as the table must word it.
var strategyGuards = []struct{ test, step string }{
	{"TestSchemaOffersEveryStrategy", "go generate ./schema"},
	{"TestDocsNativeWaitTable", "docs/strategies.md"},
	{"TestDocsFlagReference", "docs/flags.md"},
}

// The rows that add a strategy to the registry.
var strategyRows = []string{"a strategy", "a lock library", "a lock service"}

// tableRow is the row of docs/architecture.md's growth table whose first cell is what.
func tableRow(t *testing.T, what string) string {
	t.Helper()
	doc, err := os.ReadFile("docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(doc), "\n") {
		if strings.HasPrefix(line, "| "+what+" |") {
			return line
		}
	}
	t.Fatalf("docs/architecture.md has no row %q in its growth table", what)
	return ""
}

// A new strategy reaches the CLI with no other file: it is listed, completed and named.
// It runs only in the child process that registered the probe.
func TestArchitectureProbeReachesTheCLI(t *testing.T) {
	if os.Getenv(probeEnv) == "" {
		t.Skip("runs in TestArchitectureTableNamesWhatAStrategyTouches's child process")
	}
	if names := strategiesPrinted(t); !slices.Contains(names, probeName) {
		t.Errorf("lockbench strategies does not list the new strategy: %q", names)
	}
	if code, script, stderr := cli("completion", "bash"); code != exitOK || !strings.Contains(script, probeName) {
		t.Errorf("completion bash: exit %d, %s; the script does not offer the new strategy", code, stderr)
	}
	if code, out, stderr := cli("strategies", probeName); code != exitOK || !strings.Contains(out, probeName) {
		t.Errorf("strategies %s: exit %d, %s%s", probeName, code, out, stderr)
	}
}

// A strategy registered and nothing else done fails exactly the guard tests whose steps the
// table's strategy, library and service rows name.
func TestArchitectureTableNamesWhatAStrategyTouches(t *testing.T) {
	t.Parallel()
	run := []string{"TestArchitectureProbeReachesTheCLI"}
	for _, g := range strategyGuards {
		run = append(run, g.test)
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^("+strings.Join(run, "|")+")$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), probeEnv+"=1")
	out, _ := cmd.CombinedOutput() // the guards fail: that is the point
	result := map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^--- (PASS|FAIL|SKIP): (\w+)`).FindAllStringSubmatch(string(out), -1) {
		result[m[2]] = m[1]
	}
	if r := result["TestArchitectureProbeReachesTheCLI"]; r != "PASS" {
		t.Fatalf("the probe strategy did not reach the CLI (%q):\n%s", r, out)
	}
	for _, g := range strategyGuards {
		switch result[g.test] {
		case "FAIL":
			for _, what := range strategyRows {
				if row := tableRow(t, what); !strings.Contains(row, g.step) {
					t.Errorf("a new strategy fails %s until %s follows; docs/architecture.md's row %q does not say so", g.test, g.step, what)
				}
			}
		case "PASS":
			t.Errorf("%s passes with a strategy no file knows of: it no longer pins the registry, so take %q out of strategyGuards and, if nothing else needs it, out of the table", g.test, g.step)
		default:
			t.Errorf("%s did not run in the child process:\n%s", g.test, out)
		}
	}
}

// Every package under services/ is a lock service that registers itself: internal/builtin
// imports each one (the one line the table's service row asks for), and scripts/test.sh
// installs each registered service's server so that CI runs its tests.
func TestArchitectureServicesAreImportedAndInstalled(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join("internal", "builtin", "builtin.go"), nil, parser.ImportsOnly)
	if err != nil {
		t.Fatal(err)
	}
	imported := map[string]bool{}
	for _, im := range f.Imports {
		path, _ := strconv.Unquote(im.Path.Value)
		imported[path] = true
	}
	dirs, err := os.ReadDir("services")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		if !d.IsDir() || d.Name() == "internal" {
			continue
		}
		if path := "github.com/lockbench/lockbench/services/" + d.Name(); !imported[path] {
			t.Errorf("internal/builtin does not import %s: its service is not in the binary", path)
		}
	}
	script, err := os.ReadFile(filepath.Join("scripts", "test.sh"))
	if err != nil {
		t.Fatal(err)
	}
	all := services.All()
	if len(all) < 2 {
		t.Fatalf("%d services registered", len(all))
	}
	for _, s := range all {
		if !strings.Contains(strings.ToLower(string(script)), strings.ToLower(s.Name)) {
			t.Errorf("scripts/test.sh does not install %s's server (%q appears nowhere in it)", s.Title, s.Name)
		}
	}
}

// Every path the growth table names (with a slash; NAME and the like are placeholders)
// exists, so that a file moved or renamed takes the table along.
func TestArchitectureTableNamesFilesThatExist(t *testing.T) {
	doc, err := os.ReadFile("docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for line := range strings.SplitSeq(string(doc), "\n") {
		if strings.HasPrefix(line, "| ") {
			rows = append(rows, line)
		}
	}
	if len(rows) < 8 {
		t.Fatalf("docs/architecture.md's growth table has %d rows", len(rows))
	}
	checked := 0
	for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(strings.Join(rows, "\n"), -1) {
		path := m[1]
		if !strings.Contains(path, "/") || strings.ContainsAny(path, " :()") || regexp.MustCompile(`[A-Z]{3}`).MatchString(path) {
			continue // not a path, or one with a placeholder (strategies/NAME.go)
		}
		checked++
		if found, _ := filepath.Glob(strings.TrimSuffix(path, "/")); len(found) == 0 {
			t.Errorf("docs/architecture.md's growth table names %s, which does not exist", path)
		}
	}
	if checked < 10 {
		t.Errorf("checked %d paths of the table; the pattern missed them", checked)
	}
}

// strategiesPrinted are the names `lockbench strategies` prints, in its order.
func strategiesPrinted(t *testing.T) []string {
	t.Helper()
	code, out, stderr := cli("strategies", "--format", "json")
	if code != exitOK {
		t.Fatalf("strategies --format json: exit %d: %s", code, stderr)
	}
	var list []struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("strategies --format json: %v", err)
	}
	var names []string
	for _, s := range list {
		names = append(names, s.Name)
	}
	if len(names) == 0 {
		t.Fatal("strategies --format json listed none")
	}
	return names
}

// The profile schema offers every strategy `lockbench strategies` prints, and no other: its
// generator (schema/gen) sees the registries the binary has through internal/builtin, so a
// service or library package imported here but not there fails this test.
func TestSchemaOffersEveryStrategy(t *testing.T) {
	want := strategiesPrinted(t)
	slices.Sort(want)
	text, err := schema.File(schema.Profile)
	if err != nil {
		t.Fatal(err)
	}
	type names struct {
		AnyOf []struct {
			Enum []string `json:"enum"`
		} `json:"anyOf"`
	}
	var doc struct {
		Properties struct {
			Strategy names `json:"strategy"`
			Phases   struct {
				Items struct {
					Properties struct {
						Strategy names `json:"strategy"`
					} `json:"properties"`
				} `json:"items"`
			} `json:"phases"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(text, &doc); err != nil {
		t.Fatal(err)
	}
	for _, where := range []struct {
		key   string
		of    names
		extra []string
	}{
		{"strategy", doc.Properties.Strategy, []string{"all"}},
		{"phases[].strategy", doc.Properties.Phases.Items.Properties.Strategy, nil},
	} {
		if len(where.of.AnyOf) == 0 {
			t.Errorf("schema/profile.json: %s has no anyOf", where.key)
			continue
		}
		got := slices.DeleteFunc(slices.Clone(where.of.AnyOf[0].Enum), func(n string) bool { return slices.Contains(where.extra, n) })
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("schema/profile.json: %s offers %q;\nlockbench strategies prints %q\n(add the package to internal/builtin, then go generate ./schema)", where.key, got, want)
		}
	}
}
