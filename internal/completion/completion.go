// Package completion writes lockbench's shell completion scripts (bash, zsh, fish). It walks
// each command's own pflag.FlagSet (the one its --help prints), so a flag added to a command
// is completed without anything else to update; the values of the flags that have a fixed
// set (strategies, formats, profiles, faults, sweep parameters, ...) come from the packages
// that define them.
package completion

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/lockbench/lockbench/faults"
	"github.com/lockbench/lockbench/profiles"
	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/services/redis"
	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/workload"
)

// Command is a command of the CLI as the caller has it.
type Command struct {
	Name, Summary string
	// Subcommands are the words that can follow Name (report plot, target up, ...).
	Subcommands []string
	// Flags returns the flag set the command parses after args: nil for the command itself,
	// one word for a subcommand. Its visible flags (not Hidden, not deprecated) are completed,
	// with --help; an empty set means --help alone, and nil no flags at all.
	Flags func(args []string) *pflag.FlagSet
}

var shells = []string{"bash", "zsh", "fish"}

// Shells are the shells Write writes a script for.
func Shells() []string { return slices.Clone(shells) }

// Write writes the completion script for shell that completes cmds.
func Write(w io.Writer, shell string, cmds []Command) error {
	specs := specsOf(cmds)
	switch shell {
	case "bash":
		return writeBash(w, specs)
	case "zsh":
		return writeZsh(w, specs)
	case "fish":
		return writeFish(w, specs)
	}
	return fmt.Errorf("unknown shell %q; valid: %s", shell, strings.Join(shells, ", "))
}

// spec is a command or subcommand as completion sees it.
type spec struct {
	name, summary string
	flags         []flag
	subs          []spec
}

// flag is one flag: its names, whether it takes a value, the values it can take when they
// are a fixed set, and whether the value is a file (or directory).
type flag struct {
	name, short, usage string
	takesValue         bool
	values             []string
	list               bool // a comma-separated list of values (--strategy a,b)
	file, dir          bool
}

func specsOf(cmds []Command) []spec {
	var out []spec
	for _, c := range cmds {
		s := spec{name: c.Name, summary: c.Summary, flags: setFlags(c.Name, c.Flags(nil))}
		for _, sub := range c.Subcommands {
			s.subs = append(s.subs, spec{name: sub, flags: setFlags(c.Name, c.Flags([]string{sub}))})
		}
		out = append(out, s)
	}
	return out
}

var helpFlag = flag{name: "help", short: "h", usage: "show the command's usage"}

// setFlags are the flags of cmd (or of one of its subcommands) in fs, in fs's order, as its
// usage shows them: hidden and deprecated flags left out, a deprecated shorthand too; the
// value's name is the one the usage prints (a `NAME` in the usage, or the value's type).
func setFlags(cmd string, fs *pflag.FlagSet) []flag {
	if fs == nil {
		return nil
	}
	var flags []flag
	fs.VisitAll(func(fl *pflag.Flag) {
		if fl.Hidden || fl.Deprecated != "" {
			return
		}
		valueName, usage := pflag.UnquoteUsage(fl)
		f := flag{name: fl.Name, short: fl.Shorthand, takesValue: valueName != "", usage: strings.Join(strings.Fields(usage), " ")}
		if fl.ShorthandDeprecated != "" {
			f.short = ""
		}
		completeValues(cmd, &f, valueName)
		flags = append(flags, f)
	})
	if fs.Lookup("help") != nil {
		return flags
	}
	return append(flags, helpFlag)
}

// fileFlags take a path; dirFlags a directory.
var (
	fileFlags = []string{"out", "plot", "live", "cpuprofile", "memprofile", "profile", "state", "tls-ca-cert", "tls-cert", "tls-key"}
	dirFlags  = []string{"hdr-dir"}
)

// completeValues fills in what f's value can be: a fixed set for the load commands'
// enumerated flags and for any flag whose value name lists its choices (off|auto|DUR).
func completeValues(cmd string, f *flag, valueName string) {
	if !f.takesValue {
		return
	}
	f.file, f.dir = slices.Contains(fileFlags, f.name), slices.Contains(dirFlags, f.name)
	load := cmd == "run" || cmd == "sweep" || cmd == "capacity"
	switch {
	case load && f.name == "strategy":
		f.values, f.list = append(strategies.Names(), "all"), true
	case load && f.name == "format":
		f.values = report.Formats()
	case load && f.name == "profile":
		for _, p := range profiles.Builtins() {
			f.values = append(f.values, p.Name)
		}
	case load && f.name == "wait":
		f.values = []string{"native", "spin", "backoff", "pubsub"}
	case load && f.name == "key-dist":
		f.values = []string{"uniform", "zipf"}
	case load && f.name == "fault":
		for _, form := range faults.Forms() {
			kind, _, _ := strings.Cut(form, ":")
			f.values = append(f.values, kind)
		}
	case (load || cmd == "target") && f.name == "topology":
		f.values = redis.Topologies()
	case cmd == "sweep" && f.name == "param":
		for _, p := range workload.SweepParams {
			f.values = append(f.values, p+"=")
		}
	case strings.Contains(valueName, "|"):
		for _, v := range strings.Split(valueName, "|") {
			if v == strings.ToLower(v) && v != "" {
				f.values = append(f.values, v)
			}
		}
	}
}

// shellQuote quotes s for a POSIX shell (and fish and zsh) in single quotes.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func quoteAll(vs []string) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = shellQuote(v)
	}
	return out
}

// flatSpec is a command or subcommand with the top-level command it is under.
type flatSpec struct {
	top string
	spec
}

func flatten(specs []spec) []flatSpec {
	var out []flatSpec
	for _, c := range specs {
		out = append(out, flatSpec{c.name, c})
		for _, s := range c.subs {
			out = append(out, flatSpec{c.name, s})
		}
	}
	return out
}

func names(specs []spec) []string {
	var out []string
	for _, c := range specs {
		out = append(out, c.name)
	}
	return out
}

func flagWords(flags []flag) string {
	var out []string
	for _, f := range flags {
		out = append(out, "--"+f.name)
		if f.short != "" {
			out = append(out, "-"+f.short)
		}
	}
	return strings.Join(out, " ")
}

// firstClause is a flag's usage cut for a menu: its first clause.
func firstClause(usage string) string {
	s, _, _ := strings.Cut(usage, ";")
	s, _, _ = strings.Cut(s, " (")
	return strings.TrimSpace(s)
}

// casePattern turns "run --out|run -o" into a case pattern: each alternative quoted.
func casePattern(p string) string {
	alts := strings.Split(p, "|")
	for i, a := range alts {
		alts[i] = `"` + a + `"`
	}
	return strings.Join(alts, "|")
}
