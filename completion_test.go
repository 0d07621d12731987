package main

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// End to end: the scripts come from the real commands and flag sets. Every command and every
// run flag is in the bash script, a real bash completes with it, and zsh and fish read theirs
// (internal/completion tests what each shell completes).
func TestCompletionEndToEnd(t *testing.T) {
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
	const prog = `source "$1"; shift
COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
_lockbench
printf '%s\n' "${COMPREPLY[@]}"
`
	for _, tc := range []struct {
		words []string
		want  []string
	}{
		{[]string{"lockbench", "run", "--strategy", "tok"}, []string{"token"}},
		{[]string{"lockbench", "sweep", "--param", "re"}, []string{"read-ratio="}},
		{[]string{"lockbench", "run", "--fault", "holder-c"}, []string{"holder-crash"}},
		{[]string{"lockbench", "report", ""}, []string{"plot", "compare", "merge", "html"}},
		{[]string{"lockbench", "completion", ""}, []string{"bash", "zsh", "fish"}},
	} {
		out, err := exec.Command(bash, append([]string{"--norc", "-c", prog, "bash", path}, tc.words...)...).CombinedOutput()
		if err != nil {
			t.Errorf("%q: %v\n%s", tc.words, err, out)
			continue
		}
		if got := strings.Fields(string(out)); !slices.Equal(got, tc.want) {
			t.Errorf("%q completes to %q; want %q", tc.words, got, tc.want)
		}
	}

	for _, shell := range []string{"zsh", "fish"} {
		code, script, stderr := cli("completion", shell)
		if code != exitOK || !strings.Contains(script, "metrics-addr") {
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

// The subcommands completion offers are the ones a command's usage line names
// ("Usage: lockbench report plot|compare|merge|html ...").
func TestCompletionKnowsTheSubcommands(t *testing.T) {
	var checked []string
	for _, c := range completionCommands() {
		_, usage, _ := cli(c.Name, "--help")
		line, _, _ := strings.Cut(usage, "\n")
		words := strings.Fields(strings.TrimPrefix(line, "Usage: lockbench "+c.Name))
		if len(words) == 0 || !strings.Contains(words[0], "|") || strings.ContainsAny(words[0][:1], "-[") {
			continue
		}
		checked = append(checked, c.Name)
		for _, sub := range strings.Split(words[0], "|") {
			if !slices.Contains(c.Subcommands, sub) {
				t.Errorf("%s: usage %q names %q; completion offers %q", c.Name, line, sub, c.Subcommands)
			}
		}
	}
	if !slices.Equal(checked, []string{"report", "target", "completion"}) {
		t.Errorf("checked the usage lines of %q; want report, target and completion", checked)
	}
}

func TestCompletionRefusesAnUnknownShell(t *testing.T) {
	code, _, stderr := cli("completion", "powershell")
	if code != exitUsage || !strings.Contains(stderr, "bash, zsh, fish") {
		t.Errorf("exit %d, stderr %q; want 2 naming the shells", code, stderr)
	}
}

// Every visible flag of every command and subcommand, as its real flag set has it, is in
// the bash script; a command that parses no flag set (report) still completes --help.
func TestCompletionWalksEveryFlagSet(t *testing.T) {
	code, script, stderr := cli("completion", "bash")
	if code != exitOK {
		t.Fatalf("completion bash: exit %d: %s", code, stderr)
	}
	seen := 0
	for _, c := range commands() {
		for _, args := range append([][]string{nil}, wordsOf(subcommands[c.name])...) {
			if c.name == "completion" && args != nil {
				continue
			}
			fs := commandFlags(c, args)
			fs.VisitAll(func(fl *pflag.Flag) {
				if fl.Hidden {
					return
				}
				seen++
				if !strings.Contains(script, "--"+fl.Name+" ") && !strings.Contains(script, "--"+fl.Name+"'") {
					t.Errorf("lockbench %s %q: the bash script does not complete --%s", c.name, args, fl.Name)
				}
			})
		}
	}
	if seen < 50 {
		t.Errorf("walked %d flags in all; the commands' flag sets were not reached", seen)
	}
}

func wordsOf(words []string) [][]string {
	var out [][]string
	for _, w := range words {
		out = append(out, []string{w})
	}
	return out
}
