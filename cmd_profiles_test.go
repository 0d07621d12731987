package main

import (
	"strings"
	"testing"
)

// 'profiles list' is what 'profiles' prints; other arguments are usage errors.
func TestProfilesList(t *testing.T) {
	code, want, stderr := cli("profiles")
	if code != exitOK || !strings.Contains(want, "quickstart") {
		t.Fatalf("profiles: exit %d, stdout %q, stderr %q", code, want, stderr)
	}
	code, got, stderr := cli("profiles", "list")
	if code != exitOK || got != want {
		t.Errorf("profiles list: exit %d, stderr %q; stdout\n%s\nwant what 'profiles' prints:\n%s", code, stderr, got, want)
	}
	if code, got, _ := cli("profiles", "show", "quickstart"); code != exitOK || !strings.Contains(got, "strategy:") {
		t.Errorf("profiles show quickstart: exit %d:\n%s", code, got)
	}
	for _, args := range [][]string{{"profiles", "list", "quickstart"}, {"profiles", "show"}, {"profiles", "quickstart"}} {
		if code, _, stderr := cli(args...); code != exitUsage || !strings.Contains(stderr, "'profiles list'") {
			t.Errorf("%v: exit %d (want %d), stderr %q", args, code, exitUsage, stderr)
		}
	}
}
