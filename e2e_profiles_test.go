package main

import (
	"path/filepath"
	"sync"
	"testing"

	"github.com/lockbench/lockbench/internal/redistest"
	"github.com/lockbench/lockbench/profiles"
)

// longProfiles are the built-in profiles that take longest to run shortened (pitfalls'
// 18 phases, the libraries, flash-sale's 2000 workers). Each is a test of its own, which
// starts with the package's first parallel tests: as subtests of
// TestE2EEveryBuiltinProfileRuns they were queued behind every other parallel test, and
// ended the package's run a minute after the rest.
var longProfiles = []string{"pitfalls", "libraries", "flash-sale"}

func TestE2EProfilePitfallsRuns(t *testing.T)  { runLongProfile(t, "pitfalls") }
func TestE2EProfileLibrariesRuns(t *testing.T) { runLongProfile(t, "libraries") }
func TestE2EProfileFlashSaleRuns(t *testing.T) { runLongProfile(t, "flash-sale") }

// runLongProfile runs the built-in profile name shortened, as runBuiltinProfile does, in
// three parts side by side (splitPhases): pitfalls' and the libraries' 20-odd phases, one
// after the other, took 48 s and 59 s as one run (load 13), mostly waiting on their windows.
// Each part starts its own servers and runs its phases with the profile's top level, and
// every phase is checked as before.
func runLongProfile(t *testing.T, name string) {
	t.Parallel()
	redistest.Require(t)
	prof, err := profiles.Load(name)
	if err != nil {
		t.Fatal(err)
	}
	// Subtests run from goroutines side by side, without waiting for a parallel slot.
	var wg sync.WaitGroup
	for _, part := range splitPhases(t, prof, 3) {
		wg.Go(func() {
			t.Run(filepath.Base(part.Name), func(t *testing.T) { runBuiltinProfile(t, part) })
		})
	}
	wg.Wait()
}

// Every name of longProfiles is a built-in profile: a renamed one would otherwise run in
// neither test.
func TestLongProfilesAreBuiltins(t *testing.T) {
	for _, name := range longProfiles {
		if _, err := profiles.Load(name); err != nil {
			t.Errorf("longProfiles names %s: %v", name, err)
		}
	}
}
