// Package usage marks the errors that are the user's input being wrong — a bad flag, value,
// profile, fault spec or address — whichever package notices: such an error has an
// ExitCode method that returns ExitCode, and the command exits with it.
package usage

import (
	"errors"
	"fmt"
)

// ExitCode is the process exit code of a usage error, as in vegeta, k6 and hey.
const ExitCode = 2

// Error is a usage error that needs no type of its own.
type Error struct{ Err error }

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// ExitCode marks it a usage error.
func (e *Error) ExitCode() int { return ExitCode }

// Errorf is a usage error with fmt.Errorf's message (and %w).
func Errorf(format string, a ...any) error { return &Error{fmt.Errorf(format, a...)} }

// Is reports whether err, or an error it wraps, is a usage error.
func Is(err error) bool {
	var ec interface{ ExitCode() int }
	return errors.As(err, &ec) && ec.ExitCode() == ExitCode
}
