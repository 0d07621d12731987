// Package cmdline is what every lockbench command shares between its flags and its exit: the
// exit codes, the errors that carry one, a command's flag set and the words of a flag that
// does not parse. It imports nothing of the engine.
package cmdline

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/lockbench/lockbench/internal/usage"
)

// Exit codes, as in vegeta, k6 and hey: distinct codes for failures a script acts on.
const (
	ExitOK           = 0
	ExitFailure      = 1              // runtime failure: Redis unreachable, I/O error
	ExitUsage        = usage.ExitCode // 2: bad flag, value, profile or fault spec
	ExitUnsafe       = 3              // --fail-on-unsafe and mutual exclusion failed
	ExitRegression   = 4              // report compare --fail-on-regression found one
	ExitErrors       = 5              // --max-errors: more Redis or network errors than allowed
	ExitInconclusive = 6              // a phase's verdict is inconclusive (report.Verdict)
	ExitInterrupted  = 130            // SIGINT/SIGTERM: the partial report was printed
)

// ExitError carries a specific exit code with its message ("" prints nothing).
type ExitError struct {
	Code int
	Msg  string
}

func (e *ExitError) Error() string { return e.Msg }

// Exit is an error that exits with code, saying msg.
func Exit(code int, msg string) error { return &ExitError{Code: code, Msg: msg} }

// ExitCode prints err for a human, as the error of command cmd, and maps it to the
// process's exit code.
func ExitCode(cmd string, err error, stderr io.Writer) int {
	if err == nil || errors.Is(err, pflag.ErrHelp) {
		return ExitOK
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		if ee.Msg != "" {
			fmt.Fprintf(stderr, "lockbench %s: %s\n", cmd, ee.Msg)
		}
		return ee.Code
	}
	if usage.Is(err) {
		// One line names the problem and where the usage is; a message of several lines (the
		// valid forms of a fault) keeps the pointer on a line of its own.
		msg := err.Error()
		if strings.Contains(msg, "\n") {
			fmt.Fprintf(stderr, "lockbench %s: %s\nRun 'lockbench %s --help' for usage.\n", cmd, msg, cmd)
		} else {
			fmt.Fprintf(stderr, "lockbench %s: %s (usage: lockbench %s --help)\n", cmd, msg, cmd)
		}
		return ExitUsage
	}
	fmt.Fprintf(stderr, "lockbench %s: %v\n", cmd, err)
	return ExitFailure
}
