package main

import (
	"io"
	"slices"
	"strings"

	"github.com/spf13/pflag"

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
// own flag set.
var subcommands = map[string][]string{
	"report":     {"plot", "compare", "merge", "html"},
	"target":     {"up", "down", "status"},
	"profiles":   {"list", "show"},
	"completion": completion.Shells(),
}

// flagCapture is the stdout a command runs with when completion asks for its flags: the
// usage of newFlags hands it the command's flag set instead of printing it.
type flagCapture struct {
	io.Writer
	fs *pflag.FlagSet
}

// commandFlags is the flag set cmd parses after args (a subcommand's word or none): the
// command runs with --help, which builds its real flag set and stops at the usage. A
// command that prints its usage without a flag set (report) has --help alone.
func commandFlags(c command, args []string) *pflag.FlagSet {
	capture := &flagCapture{Writer: io.Discard}
	_ = c.run(append(slices.Clone(args), "--help"), capture, io.Discard)
	if capture.fs == nil {
		return pflag.NewFlagSet(c.name, pflag.ContinueOnError)
	}
	return capture.fs
}

// completionCommands are lockbench's commands as completion walks them: each one's flags
// are its real flag set.
func completionCommands() []completion.Command {
	var out []completion.Command
	for _, c := range commands() {
		out = append(out, completion.Command{
			Name: c.name, Summary: c.summary, Subcommands: subcommands[c.name],
			Flags: func(args []string) *pflag.FlagSet {
				if c.name == "completion" && len(args) > 0 {
					return nil // the shells take no flags; and do not generate while generating
				}
				return commandFlags(c, args)
			},
		})
	}
	return out
}
