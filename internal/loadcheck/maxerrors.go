package loadcheck

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/lockbench/lockbench/report"
)

// MaxErrors is --max-errors: how many lock-server or network errors a phase may see, as a
// count (N) or a share of its attempts (P%). It is a pflag.Value.
type MaxErrors struct {
	set     bool
	count   uint64
	percent float64
	raw     string
}

func (m *MaxErrors) String() string { return m.raw }
func (m *MaxErrors) Type() string   { return "N|P%" }

func (m *MaxErrors) Set(s string) error {
	s = strings.TrimSpace(s)
	if p, ok := strings.CutSuffix(s, "%"); ok {
		v, err := strconv.ParseFloat(p, 64)
		if err != nil || v < 0 || v > 100 {
			return fmt.Errorf("want a count (e.g. 10) or a percentage of attempts from 0%% to 100%% (e.g. 1%%)")
		}
		*m = MaxErrors{set: true, percent: v, raw: s}
		return nil
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return fmt.Errorf("want a count (e.g. 10) or a percentage of attempts (e.g. 1%%)")
	}
	*m = MaxErrors{set: true, count: v, raw: s}
	return nil
}

// Exceeded describes the first result with more errors than allowed, "" when none has;
// name names a result as the report's table does.
func (m *MaxErrors) Exceeded(results []report.Result, name func(report.Result) string) string {
	if !m.set {
		return ""
	}
	for _, r := range results {
		attempts := r.Acquired + r.Timeouts + r.Errors
		switch {
		case m.raw != "" && strings.HasSuffix(m.raw, "%"):
			if attempts > 0 && float64(r.Errors)*100 > m.percent*float64(attempts) {
				return fmt.Sprintf("%s: %d lock-server or network errors in %d attempts (%.2f%%), more than --max-errors %s",
					name(r), r.Errors, attempts, float64(r.Errors)*100/float64(attempts), m.raw)
			}
		case r.Errors > m.count:
			return fmt.Sprintf("%s: %d lock-server or network errors, more than --max-errors %s", name(r), r.Errors, m.raw)
		}
	}
	return ""
}
