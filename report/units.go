package report

import (
	"math"
	"strconv"
	"strings"
)

// Human-readable numbers for the table and markdown reports. Every function returns a short,
// stable string: three significant digits, trailing zeros trimmed.

// unit is one step of a scale: values >= size are divided by it and get suffix.
type unit struct {
	size   float64
	suffix string
}

var (
	durationUnits = []unit{{1, "µs"}, {1e3, "ms"}, {1e6, "s"}}
	rateUnits     = []unit{{1, ""}, {1e3, "k"}, {1e6, "M"}, {1e9, "G"}}
)

// FormatUS formats a duration given in microseconds: 85µs, 1.24ms, 3.1s, 3600s; 0 is 0s.
func FormatUS(us float64) string {
	if us == 0 {
		return "0s"
	}
	return scaled(us, durationUnits)
}

// formatMS formats a duration given in milliseconds, as FormatUS does.
func formatMS(ms int64) string {
	return FormatUS(float64(ms) * 1e3)
}

// formatTTL formats a ttl in ms as formatMS does; 0 is a lock without one (--ttl 0).
func formatTTL(ms int64) string {
	if ms == 0 {
		return "none"
	}
	return formatMS(ms)
}

// formatSeconds formats a duration given in seconds, as FormatUS does.
func formatSeconds(s float64) string {
	return FormatUS(s * 1e6)
}

// FormatRate formats a count per second with a k/M/G suffix: 950, 12.3k, 1.2M.
func FormatRate(perSecond float64) string {
	return scaled(perSecond, rateUnits)
}

// scaled formats v in the first unit where it stays below 1000 once rounded to three
// significant digits (so 999.6µs is "1ms", never "1000µs"), or in the last unit.
func scaled(v float64, units []unit) string {
	u := units[0]
	for _, next := range units[1:] {
		if round3(v/u.size) < 1000 {
			break
		}
		u = next
	}
	return sig3(v/u.size) + u.suffix
}

// round3 rounds v to three significant digits (at most two decimals).
func round3(v float64) float64 {
	f, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'f', decimals3(v), 64), 64)
	return f
}

// sig3 formats v with three significant digits (at most two decimals, none from 100 up),
// trailing zeros trimmed: 1.24, 12.4, 124, 3.1, 1200.
func sig3(v float64) string {
	s := strconv.FormatFloat(v, 'f', decimals3(v), 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// decimals3 is the number of decimals that leaves three significant digits for v.
func decimals3(v float64) int {
	switch a := math.Abs(v); {
	case a < 9.995:
		return 2
	case a < 99.95:
		return 1
	default:
		return 0
	}
}

// formatCount formats an integer count with thousands separators: 1,234,567.
func formatCount(n uint64) string {
	s := strconv.FormatUint(n, 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// formatFloat formats v with the given number of decimals.
func formatFloat(v float64, decimals int) string {
	return strconv.FormatFloat(v, 'f', decimals, 64)
}
