package main

import (
	"strings"
	"testing"
)

// 'lockbench faults' prints each form as a user types it: an optional field's comma goes
// inside its brackets.
func TestFaultsPrintsFormsAsTyped(t *testing.T) {
	code, stdout, stderr := cli("faults")
	if code != exitOK {
		t.Fatalf("faults: exit %d: %s", code, stderr)
	}
	for _, want := range []string{"kill:node=I,at=T[,restart=D] ", "failover:at=T[,lag=D] ", "latency:node=I,ms=M[,jitter=D] ",
		"process-pause:p=P,d=D[,point=hold|write] "} {
		if !strings.Contains(stdout, want) {
			t.Errorf("faults does not print %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, ",[") {
		t.Errorf("faults prints an optional field after its comma (,[):\n%s", stdout)
	}
}
