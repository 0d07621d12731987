// Command lockbench benchmarks distributed lock strategies on Redis: throughput, tail
// latency, Redis cost per lock, and whether mutual exclusion actually held.
//
// main parses the command, wires packages and maps errors to exit codes; each command's
// flags live in its own file (cmd_*.go).
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	usageerr "github.com/lockbench/lockbench/internal/usage"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// Exit codes, as in vegeta, k6 and hey: distinct codes for failures a script acts on.
const (
	exitOK          = 0
	exitFailure     = 1                 // runtime failure: Redis unreachable, I/O error
	exitUsage       = usageerr.ExitCode // 2: bad flag, value, profile or fault spec
	exitUnsafe      = 3                 // --fail-on-unsafe and mutual exclusion failed
	exitRegression  = 4                 // report compare --fail-on-regression found one
	exitErrors      = 5                 // --max-errors: more Redis or network errors than allowed
	exitInterrupted = 130               // SIGINT/SIGTERM: the partial report was printed
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
		usage(stderr)
		return exitUsage
	}
	switch args[0] {
	case "-h", "--help", "help":
		if len(args) > 1 && args[0] == "help" && slices.Contains(commandNames(), args[1]) {
			return run([]string{args[1], "--help"}, stdout, stderr) // lockbench help run
		}
		usage(stdout)
		return exitOK
	case "--version", "-v":
		args = []string{"version"}
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return exitCode(c.name, c.run(args[1:], stdout, stderr), stderr)
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

func usage(w io.Writer) {
	fmt.Fprint(w, "lockbench measures distributed lock strategies on Redis: how many locks per second, at\n"+
		"what tail latency and Redis cost, and whether mutual exclusion held.\n\n"+
		"Usage:\n  lockbench <command> [flags]\n\nCommands:\n")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-12s %s\n", c.name, c.summary)
	}
	fmt.Fprint(w, "\nRun 'lockbench <command> --help' for a command's flags.\n")
}

// usageError is a bad invocation: exit 2 with the message and a pointer to --help.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func usageErrorf(format string, a ...any) error { return &usageError{fmt.Errorf(format, a...)} }

// ExitCode marks it a usage error (see isUsage).
func (e *usageError) ExitCode() int { return exitUsage }

// exitError carries a specific exit code with its message.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

// exitCode prints err for a human and maps it to the process's exit code.
func exitCode(cmd string, err error, stderr io.Writer) int {
	if err == nil || errors.Is(err, pflag.ErrHelp) {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.msg != "" {
			fmt.Fprintf(stderr, "lockbench %s: %s\n", cmd, ee.msg)
		}
		return ee.code
	}
	if isUsage(err) {
		// One line names the problem and where the usage is; a message of several lines (the
		// valid forms of a fault) keeps the pointer on a line of its own.
		msg := err.Error()
		if strings.Contains(msg, "\n") {
			fmt.Fprintf(stderr, "lockbench %s: %s\nRun 'lockbench %s --help' for usage.\n", cmd, msg, cmd)
		} else {
			fmt.Fprintf(stderr, "lockbench %s: %s (usage: lockbench %s --help)\n", cmd, msg, cmd)
		}
		return exitUsage
	}
	fmt.Fprintf(stderr, "lockbench %s: %v\n", cmd, err)
	return exitFailure
}

// isUsage reports whether err is the user's input being wrong, whichever package noticed:
// such errors say so themselves, with an ExitCode method that returns exitUsage.
func isUsage(err error) bool { return usageerr.Is(err) }

// newFlags returns a command's flag set: errors come back to us (exit 2, never a panic or
// os.Exit inside pflag), --help prints the usage to stdout.
func newFlags(name, synopsis string, stdout io.Writer) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SortFlags = false
	fs.SetOutput(io.Discard)
	fs.Usage = func() {
		if c, ok := stdout.(*flagCapture); ok {
			c.fs = fs // completion walks the flag set (cmd_completion.go)
			return
		}
		fmt.Fprintf(stdout, "Usage: lockbench %s\n\n%s\n", name, synopsis)
		if flags := fs.FlagUsagesWrapped(100); flags != "" {
			fmt.Fprintf(stdout, "\nFlags:\n%s", flags)
		}
	}
	return fs
}

func isHelp(err error) bool { return errors.Is(err, pflag.ErrHelp) }

// parseFlags parses args; --help prints the usage (pflag does) and returns pflag.ErrHelp,
// which exits 0.
func parseFlags(fs *pflag.FlagSet, args []string) error {
	err := fs.Parse(args)
	if errors.Is(err, pflag.ErrHelp) {
		return err // pflag has printed the usage
	}
	if err != nil {
		return flagError(err)
	}
	if fs.NArg() > 0 {
		return usageErrorf("unexpected argument %q", fs.Arg(0))
	}
	return nil
}

// flagError is a flag parse error in the user's words, exit 2: a value that does not parse
// names the flag, the value and what is wanted, by the flag's type — never Go's
// `strconv.ParseInt: parsing "abc": invalid syntax` or `time: missing unit`. A value of
// lockbench's own type (--hold, --watchdog, ...) keeps its own message, which says it.
func flagError(err error) error {
	var ive *pflag.InvalidValueError
	if !errors.As(err, &ive) {
		return &usageError{err}
	}
	fl, value, cause := ive.GetFlag(), ive.GetValue(), ive.Unwrap()
	var ne *strconv.NumError
	goWords := errors.As(cause, &ne) || cause != nil && strings.HasPrefix(cause.Error(), "time: ")
	if !goWords && strings.HasPrefix(cause.Error(), "invalid --"+fl.Name+" ") {
		return usageErrorf("%s", cause.Error()) // it names the flag and the value itself
	}
	want := wantOf(fl.Value.Type(), fl.DefValue)
	switch {
	case want == "" || !goWords:
		want = cause.Error()
	case ne != nil && errors.Is(ne.Err, strconv.ErrRange):
		want = "out of range: " + want
	}
	return usageErrorf("invalid --%s %q: %s", fl.Name, value, want)
}

// wantOf says what a flag of pflag type typ wants, with its default as the example when
// it is one; "" for types of lockbench's own.
func wantOf(typ, def string) string {
	example := func(fallback string) string {
		if def == "" || def == "0" || def == "0s" || def == "[]" {
			return fallback
		}
		return def
	}
	switch typ {
	case "int", "int8", "int16", "int32", "int64":
		return "want a whole number (e.g. " + example("10") + ")"
	case "uint", "uint8", "uint16", "uint32", "uint64":
		return "want a whole number >= 0 (e.g. " + example("10") + ")"
	case "float", "float32", "float64":
		return "want a decimal number (e.g. " + example("1.5") + ")"
	case "duration":
		return "want a duration with a unit (e.g. " + example("10s") + "; units ns, us, ms, s, m, h)"
	case "bool":
		return "want true or false"
	}
	return ""
}
