package main

import (
	"flag"
	"os"
	"runtime"
	"strconv"
	"testing"
)

// TestMain runs the tests, then removes the lockbench binary the tests that need a real
// process built (buildOnce, in targets_test.go) with its temporary directory. Returning
// exits with m.Run's code.
//
// Most of the end-to-end tests wait, on holds, pauses, spawned servers and processes, more
// than they compute: unless -parallel is given, two of them run per CPU rather than one.
func TestMain(m *testing.M) {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		_ = flag.Set("test.parallel", strconv.Itoa(2*runtime.GOMAXPROCS(0)))
	}
	m.Run()
	if binDir != "" {
		_ = os.RemoveAll(binDir)
	}
}
