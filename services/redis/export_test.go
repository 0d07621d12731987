package redis

import (
	"context"

	"github.com/lockbench/lockbench/internal/proc"
)

// OpenEmbedded opens the embedded target whether or not redis-server is on PATH, so that
// its tests can run in parallel with the ones that spawn servers.
func OpenEmbedded(ctx context.Context, topology string) (*Conn, error) {
	return openEmbedded(ctx, topology, "", dialer{})
}

// ProcessState exposes the process state letter reader to the tests.
var ProcessState = proc.State

// SweepTempDirs exposes the removal of killed processes' directories.
var SweepTempDirs = proc.Sweep
