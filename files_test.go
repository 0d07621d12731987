package main

import (
	"errors"
	"os/exec"

	"github.com/lockbench/lockbench/internal/output"
)

// The tests of package main read and write result files through package output.
var (
	readSummary = output.ReadSummary
	writeReport = output.WriteReport
	writeHTML   = output.WriteHTML
)

// exitStatus is the exit code of a process that ended with err, -1 when it did not exit.
func exitStatus(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return -1
}
