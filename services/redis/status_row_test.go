package redis

import (
	"slices"
	"testing"
)

// A status row says yes or no for alive and answering, the pid as a number.
func TestNodeStatusRow(t *testing.T) {
	got := NodeStatus{Role: "master", Addr: "127.0.0.1:7000", Pid: 42, Alive: true}.Row()
	want := []string{"master", "127.0.0.1:7000", "42", "yes", "no"}
	if !slices.Equal(got, want) || len(StatusHeader) != len(want) {
		t.Errorf("row %q (header %q), want %q", got, StatusHeader, want)
	}
}
