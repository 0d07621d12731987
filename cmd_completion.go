package main

import (
	"bytes"
	"io"
	"slices"
	"strings"

	"github.com/lockbench/lockbench/internal/completion"
)

const completionSynopsis = `Prints a shell completion script for bash, zsh or fish: commands, subcommands, every
command's flags, and the values of the flags that have a fixed set (strategies, formats,
profiles, wait policies, ...). The script is generated from the flags lockbench has, so
regenerate it after an upgrade.

  bash:  source <(lockbench completion bash)        # or save it in /etc/bash_completion.d/lockbench
  zsh:   lockbench completion zsh > "${fpath[1]}/_lockbench"   # then restart zsh (compinit)
  fish:  lockbench completion fish > ~/.config/fish/completions/lockbench.fish`

func completionCmd(args []string, stdout, _ io.Writer) error {
	fs := newFlags("completion bash|zsh|fish", completionSynopsis, stdout)
	if err := fs.Parse(args); err != nil {
		if isHelp(err) {
			return err // pflag has printed the usage
		}
		return flagError(err)
	}
	if fs.NArg() != 1 || !slices.Contains(completion.Shells(), fs.Arg(0)) {
		return usageErrorf("want one shell: %s", strings.Join(completion.Shells(), ", "))
	}
	return completion.Write(stdout, fs.Arg(0), completionCommands())
}

// subcommands are the words that follow these commands; each one's flags come from its
// own --help.
var subcommands = map[string][]string{
	"report":     {"plot", "compare", "merge", "html"},
	"target":     {"up", "down", "status"},
	"profiles":   {"list", "show"},
	"completion": completion.Shells(),
}

// completionCommands are lockbench's commands as completion reads them: each one's flags
// from the usage its --help prints from its real flag set.
func completionCommands() []completion.Command {
	var out []completion.Command
	for _, c := range commands() {
		out = append(out, completion.Command{
			Name: c.name, Summary: c.summary, Subcommands: subcommands[c.name],
			Help: func(args []string) string {
				if c.name == "completion" && len(args) > 0 {
					return "" // the shells take no flags; and do not generate while generating
				}
				var buf bytes.Buffer
				_ = c.run(append(args, "--help"), &buf, io.Discard)
				return buf.String()
			},
		})
	}
	return out
}
