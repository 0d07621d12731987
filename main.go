// Command lockbench benchmarks distributed lock strategies on Redis: throughput, tail
// latency, Redis cost per lock, and whether mutual exclusion actually held.
//
// main parses the command, wires packages and maps errors to exit codes; each command's
// flags live in its own file (cmd_*.go). What a load command does once its flags are
// resolved is package launch's; the exit codes and the flag sets are package cli's.
package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/lockbench/lockbench/internal/buildinfo"
	"github.com/lockbench/lockbench/internal/cmdline"
	"github.com/lockbench/lockbench/internal/usage"
	"github.com/spf13/pflag"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// version is set at release builds with -ldflags "-X main.version=v1.2.3"; otherwise it is
// read from the module build info (package buildinfo).
var version = ""

func init() { buildinfo.Release = version }

// Exit codes (package cli): distinct codes for failures a script acts on.
const (
	exitOK           = cmdline.ExitOK
	exitFailure      = cmdline.ExitFailure
	exitUsage        = cmdline.ExitUsage
	exitUnsafe       = cmdline.ExitUnsafe
	exitRegression   = cmdline.ExitRegression
	exitErrors       = cmdline.ExitErrors
	exitInconclusive = cmdline.ExitInconclusive
	exitInterrupted  = cmdline.ExitInterrupted
)

// The commands' shared flag handling, package cli's.
var (
	parseFlags  = cmdline.Parse
	isHelp      = cmdline.IsHelp
	flagError   = cmdline.FlagError
	usageErrorf = usage.Errorf
	isUsage     = usage.Is
)

type command struct {
	name, summary string
	run           func(args []string, stdout, stderr io.Writer) error
}

func commands() []command {
	return []command{
		{"run", "drive lock strategies with many workers and report throughput, latency, cost and safety", runCmd},
		{"sweep", "vary one parameter (ttl, watchdog, workers, keys, ...) and recommend a setting", sweepCmd},
		{"capacity", "find the highest lock rate this Redis sustains within a latency objective", capacityCmd},
		{"report", "plot, compare, merge or share (html) result files written with --format json", reportCmd},
		{"strategies", "list the lock strategies, their properties and known weaknesses", strategiesCmd},
		{"profiles", "list the built-in scenario profiles, or show one", profilesCmd},
		{"faults", "list the faults --fault can inject", faultsCmd},
		{"target", "keep a spawned Redis topology running between runs: up, down, status", targetCmd},
		{"version", "print the version", versionCmd},
		{"completion", "print a shell completion script: bash, zsh or fish", completionCmd},
	}
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usageText(stderr)
		return exitUsage
	}
	switch args[0] {
	case "-h", "--help", "help":
		if len(args) > 1 && args[0] == "help" && slices.Contains(commandNames(), args[1]) {
			return run([]string{args[1], "--help"}, stdout, stderr) // lockbench help run
		}
		usageText(stdout)
		return exitOK
	case "--version", "-v":
		args = []string{"version"}
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return cmdline.ExitCode(c.name, c.run(args[1:], stdout, stderr), stderr)
		}
	}
	fmt.Fprintf(stderr, "lockbench: unknown command %q; valid: %s\nRun 'lockbench --help' for usage.\n", args[0], strings.Join(commandNames(), ", "))
	return exitUsage
}

func commandNames() []string {
	var names []string
	for _, c := range commands() {
		names = append(names, c.name)
	}
	return names
}

func usageText(w io.Writer) {
	fmt.Fprint(w, "lockbench measures distributed lock strategies on Redis: how many locks per second, at\n"+
		"what tail latency and Redis cost, and whether mutual exclusion held.\n\n"+
		"Usage:\n  lockbench <command> [flags]\n\nCommands:\n")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-12s %s\n", c.name, c.summary)
	}
	fmt.Fprint(w, "\nRun 'lockbench <command> --help' for a command's flags.\n")
}

// newFlags is a command's flag set (package cmdline); when completion asks for a command's
// flags, its usage hands the flag set over instead of printing it (cmd_completion.go).
func newFlags(name, synopsis string, stdout io.Writer) *pflag.FlagSet {
	fs := cmdline.NewFlags(name, synopsis, stdout)
	if c, ok := stdout.(*flagCapture); ok {
		fs.Usage = func() { c.fs = fs }
	}
	return fs
}
