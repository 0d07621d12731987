package redis

import "github.com/lockbench/lockbench/internal/usage"

// ExitCode is usage.ExitCode for both: the target the flags describe is the user's input being wrong, as a
// command line reports it. (An unreachable server or a failed authentication is exit 1, a
// runtime failure: those errors have no ExitCode.)
func (e *SpecError) ExitCode() int { return usage.ExitCode }

// ExitCode is usage.ExitCode: a malformed address is a usage error.
func (e *AddrError) ExitCode() int { return usage.ExitCode }

// ExitCode is usage.ExitCode: a state file lockbench refuses (another user's, or writable by others) is
// the user's to fix.
func (e *StateError) ExitCode() int { return usage.ExitCode }
