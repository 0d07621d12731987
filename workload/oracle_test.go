package workload

import (
	"reflect"
	"testing"
)

// A key's oracle state fills one cache line: workers on different keys never share one, and
// a cycle's first look at its key brings in all it needs.
func TestKeyStateIsOneCacheLine(t *testing.T) {
	if n := reflect.TypeFor[keyState]().Size(); n != 64 {
		t.Fatalf("keyState is %d bytes, want 64", n)
	}
}
