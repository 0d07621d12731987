package server

import "os"

// Windows spawns nothing (see internal/proc): a server dying with lockbench, and pausing
// it, rest on Unix process control (a parent-death signal or a process group to kill,
// SIGSTOP and SIGCONT). Runs reach a server the user runs (--redis, --sentinel), or the
// embedded target when redis-server is not on PATH. So no state file records a process of
// lockbench's here: proc.CommandLine finds none, and every state file is stale.

// stopSignal and contSignal are nil: Windows has no SIGSTOP or SIGCONT, so Server.Pause and
// Server.Resume return ErrPauseUnsupported.
var stopSignal, contSignal os.Signal
