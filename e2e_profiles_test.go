package main

import (
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

func runLongProfile(t *testing.T, name string) {
	t.Parallel()
	redistest.Require(t)
	prof, err := profiles.Load(name)
	if err != nil {
		t.Fatal(err)
	}
	runBuiltinProfile(t, prof)
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
