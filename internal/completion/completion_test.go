package completion

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/workload"
	"github.com/spf13/pflag"
)

// bindLoad gives fs a few of the load commands' flags: enumerated values, comma lists,
// paths, a value name that lists its choices, and a usage long enough to wrap.
func bindLoad(fs *pflag.FlagSet) {
	fs.StringP("strategy", "s", "token", "strategies to run, comma-separated, or all")
	fs.IntP("workers", "w", 10, "concurrent workers")
	fs.StringP("format", "f", "table", "output format")
	fs.StringP("out", "o", "", "write the report to `FILE` (default: stdout)")
	fs.String("hdr-dir", "", "write one HDR histogram per phase into `DIR`")
	fs.String("wait", "backoff", "how a waiter waits")
	fs.StringArray("fault", nil, "inject a fault (repeatable); see 'lockbench faults'")
	fs.Duration("duration", 10*time.Second, "how long each phase runs")
	fs.String("watchdog", "off", "renew held locks: `off|auto|DUR`; auto renews at a third of the ttl, which is long enough a sentence to wrap onto a second line of the usage")
	fs.String("metrics-addr", "", "serve Prometheus metrics on `ADDR`: the phase's counters")
	fs.BoolP("quiet", "q", false, "print nothing but the report")
}

// testCommands is a small CLI named lockbench: load commands with real flag sets (the
// values table keys on their names), one with subcommands, one without a flag of its own,
// one whose subcommands take no flags, and summaries a shell must not read as syntax.
func testCommands() []Command {
	load := func(name string, more func(*pflag.FlagSet)) Command {
		return Command{Name: name, Summary: "the " + name + " command's summary: it's quoted", Flags: func(args []string) *pflag.FlagSet {
			fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
			fs.SortFlags = false
			bindLoad(fs)
			if more != nil {
				more(fs)
			}
			return fs
		}}
	}
	return []Command{
		load("run", nil),
		load("sweep", func(fs *pflag.FlagSet) {
			fs.String("param", "", "the parameter to vary and its values: NAME=V1,V2,...")
		}),
		{Name: "report", Summary: "plot or compare results", Subcommands: []string{"plot", "compare"}, Flags: func(args []string) *pflag.FlagSet {
			fs := pflag.NewFlagSet("report", pflag.ContinueOnError)
			switch {
			case len(args) == 0: // no flags of its own
			case args[0] == "compare":
				fs.Bool("fail-on-regression", false, "exit 1 on a regression")
				fs.Bool("fail-on-unsafe", false, "exit 1 when B saw overlaps")
			default:
				fs.StringP("out", "o", "", "the picture's `FILE`")
			}
			return fs
		}},
		{Name: "version", Summary: "print the version", Flags: func([]string) *pflag.FlagSet { return pflag.NewFlagSet("version", pflag.ContinueOnError) }},
		{Name: "completion", Summary: "print a shell completion script", Subcommands: Shells(), Flags: func(args []string) *pflag.FlagSet {
			if len(args) > 0 {
				return nil
			}
			return pflag.NewFlagSet("completion", pflag.ContinueOnError)
		}},
	}
}

// writeScript writes the test CLI's script for shell into a temporary file.
func writeScript(t *testing.T, shell string) string {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, shell, testCommands()); err != nil {
		t.Fatalf("Write %s: %v", shell, err)
	}
	path := filepath.Join(t.TempDir(), "lockbench."+shell)
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func lookShell(t *testing.T, shell string) string {
	t.Helper()
	path, err := exec.LookPath(shell)
	if err != nil {
		t.Skipf("no %s installed", shell)
	}
	return path
}

// completionDir is a working directory with a directory, a file whose name has a space,
// and a file that matches neither.
func completionDir(t *testing.T) string {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"space name.json", "other.txt"} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func sameSet(got, want []string) bool {
	got, want = slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want))
	return slices.Equal(got, want)
}

// sweepParams are what sweep --param completes to: each parameter the workload can sweep.
func sweepParams() []string {
	var out []string
	for _, p := range workload.SweepParams {
		out = append(out, p+"=")
	}
	return out
}

func TestWriteRefusesAnUnknownShell(t *testing.T) {
	err := Write(&bytes.Buffer{}, "powershell", testCommands())
	if err == nil || !strings.Contains(err.Error(), `"powershell"`) || !strings.Contains(err.Error(), "bash, zsh, fish") {
		t.Errorf("Write powershell: %v; want an error naming it and the shells", err)
	}
}

// bashComplete runs the script's _lockbench in dir as bash does on TAB: words are
// COMP_WORDS, the last one the word being completed. It returns the candidates and the
// compopt calls; compopt works only while bash runs a completion, so the test's bash
// replaces it with a function that records its arguments.
func bashComplete(t *testing.T, bash, script, dir string, words ...string) (cands, compopt []string) {
	t.Helper()
	const prog = `compopt() { printf 'compopt:%s\n' "$*"; }
source "$1"; shift
COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
_lockbench
printf 'cand:%s\n' "${COMPREPLY[@]}"
`
	cmd := exec.Command(bash, append([]string{"--norc", "-c", prog, "bash", script}, words...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%q: %v\n%s", words, err, out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if c, ok := strings.CutPrefix(line, "cand:"); ok {
			if c != "" { // printf prints one empty "cand:" for no candidates
				cands = append(cands, c)
			}
		} else if o, ok := strings.CutPrefix(line, "compopt:"); ok {
			compopt = append(compopt, o)
		} else if line != "" {
			t.Errorf("%q: bash printed %q", words, line)
		}
	}
	return cands, compopt
}

// A real bash completes commands, subcommands, flags and their values: whole file names (no
// space after a directory), comma lists, and a value after --flag= whether bash split the
// word at the = or not.
func TestBash(t *testing.T) {
	bash := lookShell(t, "bash")
	script, dir := writeScript(t, "bash"), completionDir(t)
	for _, tc := range []struct {
		words     []string
		want      []string
		filenames bool // the completion asked bash to treat the candidates as paths
	}{
		{[]string{"lockbench", "r"}, []string{"run", "report"}, false},
		{[]string{"lockbench", "run", "--metr"}, []string{"--metrics-addr"}, false},
		{[]string{"lockbench", "report", ""}, []string{"plot", "compare"}, false},
		{[]string{"lockbench", "report", "compare", "--fail-on-r"}, []string{"--fail-on-regression"}, false},
		{[]string{"lockbench", "report", "-"}, []string{"--help", "-h"}, false},
		{[]string{"lockbench", "version", "-"}, []string{"--help", "-h"}, false},
		{[]string{"lockbench", "completion", ""}, []string{"bash", "zsh", "fish"}, false},
		{[]string{"lockbench", "completion", "bash", "-"}, nil, false},
		{[]string{"lockbench", "run", "--watchdog", ""}, []string{"off", "auto"}, false},
		{[]string{"lockbench", "run", "--fault", "holder-c"}, []string{"holder-crash"}, false},
		{[]string{"lockbench", "sweep", "--param", "re"}, []string{"read-ratio="}, false},
		{[]string{"lockbench", "sweep", "--param", ""}, sweepParams(), false},
		{[]string{"lockbench", "run", "--hdr-dir", "d"}, []string{"dir"}, true},
		{[]string{"lockbench", "run", "--out", "sp"}, []string{"space name.json"}, true},
		{[]string{"lockbench", "run", "--out", `space\ n`}, []string{"space name.json"}, true},
		{[]string{"lockbench", "run", "--out", "=", "./di"}, []string{"./dir"}, true},
		{[]string{"lockbench", "run", "--out=./di"}, []string{"--out=./dir"}, true},
		{[]string{"lockbench", "report", "plot", "-o", "sp"}, []string{"space name.json"}, true}, // in every command
		{[]string{"lockbench", "run", "--strategy=tok"}, []string{"--strategy=token"}, false},
		{[]string{"lockbench", "run", "--strategy", "=", "tok"}, []string{"token"}, false},
		{[]string{"lockbench", "run", "--strategy", "token,fen"}, []string{"token,fenced"}, false},
		{[]string{"lockbench", "run", "--strategy", "=", "token,fen"}, []string{"token,fenced"}, false},
		{[]string{"lockbench", "run", "--strategy=token,fen"}, []string{"--strategy=token,fenced"}, false},
		{[]string{"lockbench", "run", "-s", "token,f"}, []string{"token,fenced", "token,fair"}, false},
		{[]string{"lockbench", "run", "--format", "=", ""}, report.Formats(), false},
		{[]string{"lockbench", "sweep", "--wait", "=", "p"}, []string{"pubsub"}, false},
	} {
		got, compopt := bashComplete(t, bash, script, dir, tc.words...)
		if !sameSet(got, tc.want) {
			t.Errorf("%q completes to %q; want %q", tc.words, got, tc.want)
		}
		if asked := slices.Contains(compopt, "-o filenames"); asked != tc.filenames {
			t.Errorf("%q: compopt calls %q; want -o filenames: %v", tc.words, compopt, tc.filenames)
		}
	}
	// "--strategy=" as bash splits it: the word under the cursor is the "=".
	got, _ := bashComplete(t, bash, script, dir, "lockbench", "run", "--strategy", "=")
	if !slices.Contains(got, "token") || slices.ContainsFunc(got, func(c string) bool { return strings.HasPrefix(c, "-") }) {
		t.Errorf("lockbench run --strategy= completes to %q; want the strategies", got)
	}
}

// zsh and fish check the syntax of their scripts: the summaries and usages hold quotes and
// colons.
func TestZshFishParse(t *testing.T) {
	for _, shell := range []string{"zsh", "fish"} {
		t.Run(shell, func(t *testing.T) {
			bin := lookShell(t, shell)
			if out, err := exec.Command(bin, "-n", writeScript(t, shell)).CombinedOutput(); err != nil {
				t.Errorf("%s -n: %v\n%s", shell, err, out)
			}
		})
	}
}

// zshComplete types line into an interactive zsh (in a zpty) with the completion system
// and the script loaded, presses TAB, and returns what the completion offered: every
// candidate compadd accepted, with the prefixes zsh would insert before it.
func zshComplete(t *testing.T, zsh, script, dump, dir, line string) []string {
	t.Helper()
	setup := filepath.Join(t.TempDir(), "setup.zsh")
	if err := os.WriteFile(setup, []byte(zshSetup), 0o644); err != nil {
		t.Fatal(err)
	}
	driver := filepath.Join(t.TempDir(), "driver.zsh")
	if err := os.WriteFile(driver, []byte(zshDriver), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, zsh, "-f", driver, line)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LB_SETUP="+setup, "LB_SCRIPT="+script, "LB_DUMP="+dump)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("zsh completing %q: %v\n%s", line, err, out)
	}
	var cands []string
	for _, c := range strings.Split(string(out), "\n") {
		if c != "" && !slices.Contains(cands, c) { // _files offers a directory once per tag it tries
			cands = append(cands, c)
		}
	}
	return cands
}

// zshSetup runs in the interactive zsh: it loads the completion system from the dump and the
// script, makes TAB complete, and wraps compadd to print each candidate (after zsh matched it
// against the word) between two marks; then the shell exits.
const zshSetup = `PS1= RPS1=
autoload -U compinit && compinit -C -d "$LB_DUMP"
source "$LB_SCRIPT"
bindkey '^I' complete-word
zstyle ':completion:*' insert-tab false
_lb_mark() { print -r -- $'\n<lb-mark>' }
compprefuncs=(_lb_mark)
comppostfuncs=(_lb_mark exit)
compadd() {
	if [[ ${@[1,(i)(-|--)]} == *-(O|A|D)\ * ]]; then
		builtin compadd "$@"
		return
	fi
	local -a __hits
	local -A __o
	builtin compadd -A __hits "$@"
	zparseopts -E -A __o P: p: S: s:
	local h
	for h in $__hits; do print -r -- "<lb-cand>$IPREFIX${__o[-P]}${__o[-p]}$h"; done
}
print -r -- '<lb-ready>'
`

// zshDriver starts the interactive zsh in a zpty, types the line and a TAB, and prints the
// candidates, one a line.
const zshDriver = `zmodload zsh/zpty
zpty lb zsh -f -i
zpty -w lb "source ${(q)LB_SETUP}"
local line
while zpty -r lb line; do [[ $line == *'<lb-ready>'* ]] && break; done
zpty -w -n lb "$1"$'\t'
integer marks
while zpty -r lb line; do
	line=${${line%$'\n'}%$'\r'}
	[[ $line == *'<lb-mark>'* ]] && (( ++marks == 2 )) && break
	[[ $line == *'<lb-cand>'* ]] && print -r -- "${line#*<lb-cand>}"
done
zpty -d lb
`

// A real zsh completes commands, flags and their values, also after --flag= and in comma
// lists.
func TestZsh(t *testing.T) {
	zsh := lookShell(t, "zsh")
	script, dir := writeScript(t, "zsh"), completionDir(t)
	dump := filepath.Join(t.TempDir(), "zcompdump") // compinit once; each shell loads the dump
	if out, err := exec.Command(zsh, "-f", "-c", `autoload -U compinit && compinit -u -d "$1"`, "zsh", dump).CombinedOutput(); err != nil {
		t.Fatalf("compinit: %v\n%s", err, out)
	}
	for _, tc := range []struct {
		line string
		want []string
	}{
		{"lockbench ru", []string{"run"}},
		{"lockbench run --metrics-a", []string{"--metrics-addr"}},
		{"lockbench run --strategy tok", []string{"token"}},
		{"lockbench run --strategy token,f", []string{"token,fenced", "token,fair"}},
		{"lockbench run --strategy=tok", []string{"--strategy=token"}},
		{"lockbench run --strategy=token,f", []string{"--strategy=token,fenced", "--strategy=token,fair"}},
		{"lockbench run --format=j", []string{"--format=json"}},
		{"lockbench run --out=./di", []string{"--out=./dir"}},
		{"lockbench run --hdr-dir=d", []string{"--hdr-dir=dir"}},
		{"lockbench sweep --param re", []string{"read-ratio="}},
		{"lockbench report c", []string{"compare"}},
		{"lockbench run --duration=", nil}, // no fixed set: nothing, not the flags
	} {
		if got := zshComplete(t, zsh, script, dump, dir, tc.line); !sameSet(got, tc.want) {
			t.Errorf("zsh: %q completes to %q; want %q", tc.line, got, tc.want)
		}
	}
}

// A real fish completes comma lists (the candidates carry what the word has up to its last
// comma) and describes each flag with the first clause of its usage.
func TestFish(t *testing.T) {
	fish := lookShell(t, "fish")
	script := writeScript(t, "fish")
	for _, tc := range []struct {
		line string
		want []string // candidate, tab, description where the test names one
	}{
		{"lockbench run --strategy tok", []string{"token"}},
		{"lockbench run --strategy token,f", []string{"token,fenced", "token,fair"}},
		{"lockbench sweep -s token,f", []string{"token,fenced", "token,fair"}},
		{"lockbench sweep -stoken,f", []string{"-stoken,fenced", "-stoken,fair"}},
		{"lockbench run --strategy=token,fen", []string{"--strategy=token,fenced"}},
		{"lockbench run --format j", []string{"json"}},
		{"lockbench sweep --param re", []string{"read-ratio=\tthe parameter to vary and its values: NAME=V1,V2,..."}},
		{"lockbench run --watch", []string{"--watchdog\trenew held locks: off|auto|DUR"}},
		{"lockbench ver", []string{"version\tprint the version"}},
		{"lockbench sw", []string{"sweep\tthe sweep command's summary: it's quoted"}},
	} {
		out, err := exec.Command(fish, "--no-config", "-c", "source $argv[1]; complete -C $argv[2]", script, tc.line).CombinedOutput()
		if err != nil {
			t.Fatalf("fish completing %q: %v\n%s", tc.line, err, out)
		}
		var got []string
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			if !slices.ContainsFunc(tc.want, func(w string) bool { return strings.Contains(w, "\t") }) {
				line, _, _ = strings.Cut(line, "\t")
			}
			if line != "" {
				got = append(got, line)
			}
		}
		if !sameSet(got, tc.want) {
			t.Errorf("fish: %q completes to %q; want %q", tc.line, got, tc.want)
		}
	}
}

// The flags are the flag set's, in its order, as its usage shows them: hidden and deprecated
// ones left out, a long usage whole, and a flag whose value name lists its choices completes
// to the lower-case ones (DUR is a placeholder).
func TestSetFlags(t *testing.T) {
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	fs.SortFlags = false
	bindLoad(fs)
	fs.Bool("internal", false, "not for users")
	_ = fs.MarkHidden("internal")
	fs.Int("old", 0, "renamed")
	_ = fs.MarkDeprecated("old", "use --workers")
	flags := setFlags("run", fs)
	var names []string
	for _, f := range flags {
		names = append(names, f.name)
	}
	want := []string{"strategy", "workers", "format", "out", "hdr-dir", "wait", "fault", "duration", "watchdog", "metrics-addr", "quiet", "help"}
	if !slices.Equal(names, want) {
		t.Fatalf("flags %q; want %q", names, want)
	}
	wd := flags[slices.Index(names, "watchdog")]
	if !strings.HasSuffix(wd.usage, "onto a second line of the usage") || !slices.Equal(wd.values, []string{"off", "auto"}) {
		t.Errorf("watchdog: usage %q, values %q; want the whole usage and [off auto]", wd.usage, wd.values)
	}
	if q := flags[slices.Index(names, "quiet")]; q.short != "q" || q.takesValue {
		t.Errorf("quiet: %+v; want -q taking no value", q)
	}
	if o := flags[slices.Index(names, "out")]; o.short != "o" || !o.takesValue || !o.file {
		t.Errorf("out: %+v; want -o taking a file", o)
	}
	if got := setFlags("version", pflag.NewFlagSet("version", pflag.ContinueOnError)); len(got) != 1 || got[0].name != "help" {
		t.Errorf("a flag set without flags: %+v; want --help alone", got)
	}
	if got := setFlags("completion", nil); got != nil {
		t.Errorf("no flag set: %+v; want no flags", got)
	}
}
