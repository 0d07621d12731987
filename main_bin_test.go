package main

import (
	"os"
	"testing"
)

// TestMain runs the tests, then removes the lockbench binary the tests that need a real
// process built (buildOnce, in targets_test.go) with its temporary directory. Returning
// exits with m.Run's code.
func TestMain(m *testing.M) {
	m.Run()
	if binDir != "" {
		_ = os.RemoveAll(binDir)
	}
}
