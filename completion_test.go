package main

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/report"
	"github.com/spf13/pflag"
)

// The bash script is generated from the real command and flag set: every command and every
// run flag is in it, and a real bash completes with it.
func TestCompletionBashCoversTheCLI(t *testing.T) {
	code, script, stderr := cli("completion", "bash")
	if code != exitOK {
		t.Fatalf("completion bash: exit %d: %s", code, stderr)
	}
	for _, name := range commandNames() {
		if !strings.Contains(script, name) {
			t.Errorf("the bash script does not mention the command %q", name)
		}
	}
	fs := newFlags("run", "", io.Discard)
	var f loadFlags
	f.bind(fs)
	fs.VisitAll(func(fl *pflag.Flag) {
		if fl.Hidden {
			return // internal (--procs-child): not for users to type
		}
		if !strings.Contains(script, "--"+fl.Name+" ") && !strings.Contains(script, "--"+fl.Name+"'") {
			t.Errorf("the bash script does not complete run --%s", fl.Name)
		}
	})

	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash to run the script with")
	}
	path := filepath.Join(t.TempDir(), "lockbench.bash")
	if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ line, want, not string }{
		{"lockbench r", "run report", ""},
		{"lockbench run --metr", "--metrics-addr", ""},
		{"lockbench run --strategy tok", "token", ""},
		{"lockbench run --strategy token,fen", "token,fenced", ""},
		{"lockbench sweep --para", "--param", ""},
		{"lockbench report ", "plot compare merge", ""},
		{"lockbench report compare --fail", "--fail-on-regression", "--fail-on-unsafe"},
		{"lockbench completion ", "bash zsh fish", ""},
		{"lockbench run --format ", "json", "bash"},
	} {
		words := strings.Fields(tc.line)
		if strings.HasSuffix(tc.line, " ") {
			words = append(words, "")
		}
		var quoted []string
		for _, w := range words {
			quoted = append(quoted, shellQuote(w))
		}
		prog := "source " + shellQuote(path) + "\nCOMP_WORDS=(" + strings.Join(quoted, " ") + ")\n" +
			"COMP_CWORD=$((${#COMP_WORDS[@]}-1))\n_lockbench\necho \"${COMPREPLY[*]}\"\n"
		out, err := exec.Command(bash, "--norc", "-c", prog).CombinedOutput()
		if err != nil {
			t.Errorf("%q: %v\n%s", tc.line, err, out)
			continue
		}
		got := strings.TrimSpace(string(out))
		if !strings.Contains(got, tc.want) || (tc.not != "" && strings.Contains(got, tc.not)) {
			t.Errorf("%q completes to %q; want it to contain %q (and not %q)", tc.line, got, tc.want, tc.not)
		}
	}
}

// zsh and fish check the syntax of their scripts, where they are installed.
func TestCompletionZshFishParse(t *testing.T) {
	for _, shell := range []string{"zsh", "fish"} {
		code, script, stderr := cli("completion", shell)
		if code != exitOK || !strings.Contains(script, "metrics-addr") || !strings.Contains(script, "sweep") {
			t.Errorf("completion %s: exit %d, stderr %q", shell, code, stderr)
			continue
		}
		bin, err := exec.LookPath(shell)
		if err != nil {
			t.Logf("no %s installed: syntax not checked", shell)
			continue
		}
		path := filepath.Join(t.TempDir(), "lockbench."+shell)
		if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(bin, "-n", path).CombinedOutput(); err != nil {
			t.Errorf("%s -n: %v\n%s", shell, err, out)
		}
	}
}

func TestCompletionRefusesAnUnknownShell(t *testing.T) {
	code, _, stderr := cli("completion", "powershell")
	if code != exitUsage || !strings.Contains(stderr, "bash, zsh, fish") {
		t.Errorf("exit %d, stderr %q; want 2 naming the shells", code, stderr)
	}
}

// bashComplete runs the script's _lockbench in dir as bash does on TAB: words are
// COMP_WORDS, the last one the word being completed. It returns the candidates and the
// compopt calls; compopt works only while bash runs a completion, so the test's bash
// replaces it with a function that records its arguments.
func bashComplete(t *testing.T, scriptPath, dir string, words ...string) (cands, compopt []string) {
	t.Helper()
	var quoted []string
	for _, w := range words {
		quoted = append(quoted, shellQuote(w))
	}
	prog := "compopt() { printf 'compopt:%s\\n' \"$*\"; }\nsource " + shellQuote(scriptPath) + "\n" +
		"COMP_WORDS=(" + strings.Join(quoted, " ") + ")\nCOMP_CWORD=$((${#COMP_WORDS[@]}-1))\n" +
		"_lockbench\nprintf 'cand:%s\\n' \"${COMPREPLY[@]}\"\n"
	cmd := exec.Command("bash", "--norc", "-c", prog)
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

// writeScript writes lockbench's completion script for shell into a temporary file.
func writeScript(t *testing.T, shell string) string {
	t.Helper()
	code, script, stderr := cli("completion", shell)
	if code != exitOK {
		t.Fatalf("completion %s: exit %d: %s", shell, code, stderr)
	}
	path := filepath.Join(t.TempDir(), "lockbench."+shell)
	if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func sameSet(got, want []string) bool {
	got, want = slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want))
	return slices.Equal(got, want)
}

// Paths complete as bash completes files (whole names, no space after a directory), and a
// flag's value completes after --flag= whether bash split the word at the = or not.
func TestCompletionBashPathsAndFlagValues(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash to run the script with")
	}
	script, dir := writeScript(t, "bash"), completionDir(t)
	for _, tc := range []struct {
		words     []string
		want      []string
		filenames bool // the completion asked bash to treat the candidates as paths
	}{
		{[]string{"lockbench", "run", "--hdr-dir", "d"}, []string{"dir"}, true},
		{[]string{"lockbench", "run", "--out", "sp"}, []string{"space name.json"}, true},
		{[]string{"lockbench", "run", "--out", `space\ n`}, []string{"space name.json"}, true},
		{[]string{"lockbench", "run", "--out", "=", "./di"}, []string{"./dir"}, true},
		{[]string{"lockbench", "run", "--out=./di"}, []string{"--out=./dir"}, true},
		{[]string{"lockbench", "run", "--strategy=tok"}, []string{"--strategy=token"}, false},
		{[]string{"lockbench", "run", "--strategy", "=", "tok"}, []string{"token"}, false},
		{[]string{"lockbench", "run", "--strategy", "token,fen"}, []string{"token,fenced"}, false},
		{[]string{"lockbench", "run", "--strategy", "=", "token,fen"}, []string{"token,fenced"}, false},
		{[]string{"lockbench", "run", "--strategy=token,fen"}, []string{"--strategy=token,fenced"}, false},
		{[]string{"lockbench", "run", "-s", "token,f"}, []string{"token,fenced", "token,fair"}, false},
		{[]string{"lockbench", "run", "--format", "=", ""}, report.Formats(), false},
		{[]string{"lockbench", "sweep", "--wait", "=", "p"}, []string{"pubsub"}, false},
	} {
		got, compopt := bashComplete(t, script, dir, tc.words...)
		if !sameSet(got, tc.want) {
			t.Errorf("%q completes to %q; want %q", tc.words, got, tc.want)
		}
		if asked := slices.Contains(compopt, "-o filenames"); asked != tc.filenames {
			t.Errorf("%q: compopt calls %q; want -o filenames: %v", tc.words, compopt, tc.filenames)
		}
	}
	// "--strategy=" as bash splits it: the word under the cursor is the "=".
	got, _ := bashComplete(t, script, dir, "lockbench", "run", "--strategy", "=")
	if !slices.Contains(got, "token") || slices.ContainsFunc(got, func(c string) bool { return strings.HasPrefix(c, "-") }) {
		t.Errorf("lockbench run --strategy= completes to %q; want the strategies", got)
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

// A real zsh completes flag values, also after --flag= and in comma lists.
func TestCompletionZshFlagValues(t *testing.T) {
	zsh, err := exec.LookPath("zsh")
	if err != nil {
		t.Skip("no zsh installed")
	}
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
		{"lockbench run --duration=", nil}, // no fixed set: nothing, not the flags
	} {
		if got := zshComplete(t, zsh, script, dump, dir, tc.line); !sameSet(got, tc.want) {
			t.Errorf("zsh: %q completes to %q; want %q", tc.line, got, tc.want)
		}
	}
}

// A real fish completes comma lists: the candidates carry what the word has up to its last
// comma.
func TestCompletionFishCommaLists(t *testing.T) {
	fish, err := exec.LookPath("fish")
	if err != nil {
		t.Skip("no fish installed")
	}
	script := writeScript(t, "fish")
	for _, tc := range []struct {
		line string
		want []string
	}{
		{"lockbench run --strategy tok", []string{"token"}},
		{"lockbench run --strategy token,f", []string{"token,fenced", "token,fair"}},
		{"lockbench sweep -s token,f", []string{"token,fenced", "token,fair"}},
		{"lockbench sweep -stoken,f", []string{"-stoken,fenced", "-stoken,fair"}},
		{"lockbench run --strategy=token,fen", []string{"--strategy=token,fenced"}},
		{"lockbench run --format j", []string{"json"}},
	} {
		out, err := exec.Command(fish, "--no-config", "-c", "source $argv[1]; complete -C $argv[2]", script, tc.line).CombinedOutput()
		if err != nil {
			t.Fatalf("fish completing %q: %v\n%s", tc.line, err, out)
		}
		var got []string
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			if c, _, _ := strings.Cut(line, "\t"); c != "" {
				got = append(got, c)
			}
		}
		if !sameSet(got, tc.want) {
			t.Errorf("fish: %q completes to %q; want %q", tc.line, got, tc.want)
		}
	}
}
