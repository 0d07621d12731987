package main

import (
	"strings"
	"testing"
)

// Sweep values, capacity's ramp and the settings a user can get wrong are refused in one
// line, exit 2, before anything runs (no Redis listens at the address given): issue 30's
// items 2, 10 and 17. A sweep value is named as --param NAME=VALUE.
func TestSweepAndCapacityInputRefused(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		mention string
	}{
		{[]string{"sweep", "--param", "keys=1,10000000000"}, `--param "keys=10000000000"`},
		{[]string{"sweep", "--param", "workers=10,2000000000"}, `--param "workers=2000000000"`},
		{[]string{"sweep", "--param", "hold=1ms,1000h", "-d", "300ms"}, "outlasts"},
		{[]string{"sweep", "--param", "ttl=1s,1000ms"}, "1s and 1000ms are one value, listed twice"},
		{[]string{"sweep", "--param", "ttl=1s", "--param", "ttl=2s"}, "given twice"},
		{[]string{"sweep", "--param", "ttl=1s,2s", "--ttl", "5s"}, "--param ttl=1s,2s sets the ttl of each phase"},
		{[]string{"sweep", "--param", "keys=1,10", "--max-blocked", "5s"}, "--max-blocked 5s"},
		{[]string{"run", "--on-lost", ""}, "want continue or abort"},
		{[]string{"run", "--rate", "100", "--max-inflight", "0"}, "--max-inflight 0"},
		{[]string{"run", "--acquire-timeout", "1ns"}, "at least 1ms"},
		{[]string{"run", "--hold", "1000h", "-d", "300ms"}, "the hold outlasts the whole phase"},
		{[]string{"run", "--reentry", "1000000", "--strategy", "reentrant-hash"}, "--reentry 1000000"},
		{[]string{"capacity", "--slo", "p99=5ms", "--start", "1e12"}, "--start 1e+12"},
		{[]string{"capacity", "--slo", "p99=5ms", "--factor", "1e308"}, "--factor 1e+308"},
		{[]string{"capacity", "--slo", "p99=5ms", "--factor", "1"}, "--factor 1"},
		{[]string{"capacity", "--slo", "p99=5ms", "--rate", "100"}, "--rate 100: capacity offers its own rates"},
		{[]string{"capacity", "--slo", "p99=5ms", "--duration", "2s"}, "--step-duration"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, _, stderr := cli(append(tc.args, "--redis", "127.0.0.1:1")...)
			if code != exitUsage || !strings.Contains(stderr, tc.mention) || strings.Count(stderr, "\n") != 1 {
				t.Fatalf("exit %d, stderr %q; want exit 2 and one line mentioning %q", code, stderr, tc.mention)
			}
			if strings.Count(stderr, "invalid --") > 1 { // it read `invalid --on-lost "": invalid --on-lost ""`
				t.Errorf("the value is named twice: %q", stderr)
			}
		})
	}
}
