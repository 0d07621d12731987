package faults_test

import (
	"strings"
	"testing"

	"github.com/lockbench/lockbench/faults"
)

// Kinds names each fault as its form starts, in the forms' order (--fault's help lists them).
func TestKindsAreTheFormsKinds(t *testing.T) {
	kinds, forms := faults.Kinds(), faults.Forms()
	if len(kinds) != len(forms) || len(kinds) == 0 {
		t.Fatalf("%d kinds, %d forms", len(kinds), len(forms))
	}
	for i, f := range forms {
		if !strings.HasPrefix(f, kinds[i]+":") {
			t.Errorf("kind %d is %q, its form %q", i, kinds[i], f)
		}
	}
}
