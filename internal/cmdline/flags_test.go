package cmdline

import (
	"testing"

	"github.com/spf13/pflag"

	"github.com/lockbench/lockbench/internal/usage"
)

// Given is what the command line set when it is taken: a flag set later (by a profile)
// is not given.
func TestGivenIsTakenOnce(t *testing.T) {
	fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
	fs.Int("workers", 1, "")
	fs.Int("keys", 1, "")
	if err := fs.Parse([]string{"--workers", "5"}); err != nil {
		t.Fatal(err)
	}
	given := Given(fs)
	if err := fs.Set("keys", "3"); err != nil {
		t.Fatal(err)
	}
	if v, ok := given("workers"); !ok || v != "5" {
		t.Errorf("workers: %q, %v; want 5, given", v, ok)
	}
	if _, ok := given("keys"); ok {
		t.Error("keys, set after Given was taken, reads as given")
	}
}

// ParseNames returns the names after the flags; a bad flag is a usage error.
func TestParseNames(t *testing.T) {
	fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
	fs.Bool("verbose", false, "")
	names, err := ParseNames(fs, []string{"--verbose", "a", "b"})
	if err != nil || len(names) != 2 || names[0] != "a" || names[1] != "b" {
		t.Errorf("names %q, %v; want a, b", names, err)
	}
	if _, err := ParseNames(pflag.NewFlagSet("y", pflag.ContinueOnError), []string{"--nope"}); !usage.Is(err) {
		t.Errorf("--nope: %v; want a usage error", err)
	}
}

func TestRepeat(t *testing.T) {
	if got := Repeat(true, " --state ", "/s.json"); got != " --state /s.json" {
		t.Errorf("given: %q", got)
	}
	if got := Repeat(false, " --state ", "/s.json"); got != "" {
		t.Errorf("not given: %q, want nothing", got)
	}
}
