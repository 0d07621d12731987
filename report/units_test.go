package report

import "testing"

func TestFormatUS(t *testing.T) {
	tests := []struct {
		us   float64
		want string
	}{
		{0, "0s"},
		{0.5, "0.5µs"},
		{3.25, "3.25µs"},
		{85, "85µs"},
		{999, "999µs"},
		{999.6, "1ms"}, // rounds up into the next unit, never "1000µs"
		{1240, "1.24ms"},
		{12400, "12.4ms"},
		{124000, "124ms"},
		{999_499, "999ms"},
		{999_500, "1s"},
		{3_100_000, "3.1s"},
		{3_600_000_000, "3600s"},
	}
	for _, tt := range tests {
		if got := FormatUS(tt.us); got != tt.want {
			t.Errorf("FormatUS(%v) = %q, want %q", tt.us, got, tt.want)
		}
	}
}

func TestFormatRate(t *testing.T) {
	tests := []struct {
		rate float64
		want string
	}{
		{0, "0"},
		{2.5, "2.5"},
		{950, "950"},
		{999.96, "1k"},
		{12345.6, "12.3k"},
		{123456, "123k"},
		{1_250_000, "1.25M"},
	}
	for _, tt := range tests {
		if got := FormatRate(tt.rate); got != tt.want {
			t.Errorf("FormatRate(%v) = %q, want %q", tt.rate, got, tt.want)
		}
	}
}

func TestFormatCount(t *testing.T) {
	tests := []struct {
		n    uint64
		want string
	}{
		{0, "0"}, {999, "999"}, {1000, "1,000"}, {1234567, "1,234,567"}, {100000, "100,000"},
	}
	for _, tt := range tests {
		if got := formatCount(tt.n); got != tt.want {
			t.Errorf("formatCount(%d) = %q, want %q", tt.n, got, tt.want)
		}
	}
}
