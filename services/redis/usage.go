package redis

// ExitCode is 2 for both: the target the flags describe is the user's input being wrong, as a
// command line reports it. (An unreachable server or a failed authentication is exit 1, a
// runtime failure: those errors have no ExitCode.)
func (e *SpecError) ExitCode() int { return 2 }

// ExitCode is 2: a malformed address is a usage error.
func (e *AddrError) ExitCode() int { return 2 }

// ExitCode is 2: a state file lockbench refuses (another user's, or writable by others) is
// the user's to fix.
func (e *StateError) ExitCode() int { return 2 }
