package main

import (
	"strings"
	"testing"
)

// Every command's and subcommand's --help exits 0, and prints a "Flags:" heading only
// with flags under it.
func TestHelpHasNoEmptyFlagsHeading(t *testing.T) {
	var all [][]string
	for _, name := range commandNames() {
		all = append(all, []string{name})
	}
	all = append(all, []string{"report", "plot"}, []string{"report", "compare"}, []string{"report", "merge"},
		[]string{"target", "up"}, []string{"target", "down"}, []string{"target", "status"},
		[]string{"profiles", "list"}, []string{"profiles", "show"})
	for _, args := range all {
		code, stdout, stderr := cli(append(args, "--help")...)
		if code != exitOK || stdout == "" {
			t.Errorf("%v --help: exit %d, stdout %q, stderr %q", args, code, stdout, stderr)
			continue
		}
		_, after, found := strings.Cut(stdout, "Flags:\n")
		if first, _, _ := strings.Cut(after, "\n"); found && !strings.HasPrefix(strings.TrimSpace(first), "-") {
			t.Errorf("%v --help prints a Flags: heading with no flags under it:\n%s", args, stdout)
		}
	}
}
