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

// A release that succeeded while a newcomer came in makes the newcomer a suspect; only the
// newcomer's own release, refused while its lease still ran, turns that into a misdelete —
// a compare-and-delete that removed its own lock just before the newcomer took the key
// (the newcomer then releases fine) is none.
func TestSuspectedMisdeleteIsConfirmedByTheVictim(t *testing.T) {
	for _, tt := range []struct {
		name             string
		notOwner, inTime bool
		want             bool
	}{
		{"victim's lock gone while its lease ran", true, true, true},
		{"victim released its own lock", false, true, false},
		{"victim's lease had lapsed anyway", true, false, false},
	} {
		var k keyState
		_, a := k.enter()
		k.exit(a)
		_, b := k.enter() // came in during a's release
		next, in := k.latestInside(a)
		if !in || next != b {
			t.Fatalf("latestInside(a) = %d, %v; want b (%d) inside", next, in, b)
		}
		k.suspectOf(next)
		if got := k.misdeleted(b, tt.notOwner, tt.inTime); got != tt.want {
			t.Errorf("%s: misdeleted %v, want %v", tt.name, got, tt.want)
		}
		if tt.want && k.misdeleted(b, true, true) {
			t.Errorf("%s: one suspicion counted twice", tt.name)
		}
	}
	var k keyState
	_, a := k.enter()
	k.exit(a)
	_, b := k.enter()
	if k.misdeleted(b, true, true) {
		t.Error("a refused release with no suspicion on the key counted as a misdelete")
	}
}
