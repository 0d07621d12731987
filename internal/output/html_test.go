package output

import (
	"strings"
	"testing"

	"github.com/lockbench/lockbench/internal/usage"
)

func TestCompareOptionsThresholdIsAPercentage(t *testing.T) {
	o, err := CompareOptions(12.5)
	if err != nil || o.Threshold != 0.125 {
		t.Errorf("CompareOptions(12.5) = %+v, %v; want a threshold of 0.125", o, err)
	}
	_, err = CompareOptions(-1)
	if err == nil || !usage.Is(err) || !strings.Contains(err.Error(), "--threshold") {
		t.Errorf("CompareOptions(-1) = %v, want a usage error naming --threshold", err)
	}
}
