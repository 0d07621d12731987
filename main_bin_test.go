package main

import (
	"flag"
	"runtime"
	"strconv"
	"testing"
)

// TestMain runs the tests, then stops the etcd, ZooKeeper and PostgreSQL servers they shared
// (sharedServiceFlags) and waits for the build of the lockbench binary the tests that need a
// real process run (buildOnce, in targets_test.go: it is kept in the build cache). Returning
// exits with m.Run's code. Without -run, the build starts at once.
//
// Most of the end-to-end tests wait, on holds, pauses, spawned servers and processes, more
// than they compute: unless -parallel is given, two of them run per CPU rather than one.
func TestMain(m *testing.M) {
	flag.Parse()
	given, only := false, false
	flag.Visit(func(f *flag.Flag) {
		given = given || f.Name == "test.parallel"
		only = only || f.Name == "test.run"
	})
	if !given {
		_ = flag.Set("test.parallel", strconv.Itoa(2*runtime.GOMAXPROCS(0)))
	}
	// The whole suite builds the binary while its serial tests run: the end-to-end tests
	// would otherwise all wait for it at once.
	if !only {
		go buildOnce()
	}
	m.Run()
	stopSharedServers()
	if !only {
		_, _ = buildOnce() // done building: go run leaves nothing of its own behind
	}
}
