package main

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

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
