package html

import (
	"slices"

	"strings"

	"github.com/lockbench/lockbench/report"
)

// sweep charts the figures of each strategy against the swept value (one point per
// phase), with the value each recommendation names marked.
func (p *page) sweep(s *report.Summary) {
	param := "value"
	var values []string
	if s.Sweep != nil {
		param, values = s.Sweep.Param, slices.Clone(s.Sweep.Values)
	}
	for _, r := range s.Results {
		if r.ParamValue != "" && !slices.Contains(values, r.ParamValue) {
			values = append(values, r.ParamValue)
		}
	}
	if len(values) == 0 {
		return
	}
	p.section("sweep", "Against "+param, "")
	ticks := make([]tick, len(values))
	for i, v := range values {
		ticks[i] = tick{float64(i), v}
	}
	xa := axis{label: param, min: -0.3, max: float64(len(values)) - 0.7, ticks: ticks}
	var strategies []string
	for _, r := range s.Results {
		if !slices.Contains(strategies, r.Strategy) {
			strategies = append(strategies, r.Strategy)
		}
	}
	figures := []struct {
		title string
		y     axis
		value func(r *report.Result) (float64, bool)
		text  func(v float64) string
	}{
		{"Acquires per second", axis{label: "acquires/s", format: report.FormatRate},
			func(r *report.Result) (float64, bool) { return r.AcquireRate, true }, report.FormatRate},
		{"Acquire p99 (log scale)", axis{label: "acquire p99", log: true, format: fmtUS},
			func(r *report.Result) (float64, bool) {
				return float64(r.LatencyUS.Acquire.P99), r.LatencyUS.Acquire.Count > 0
			}, fmtUS},
		{"Overlaps (two holders inside one key)", axis{label: "overlaps", format: num},
			func(r *report.Result) (float64, bool) { return float64(r.Safety.Overlaps), true }, func(v float64) string { return num(v) }},
		{"Redis commands per acquire", axis{label: "commands/acquire", format: num},
			func(r *report.Result) (float64, bool) {
				return r.Redis.CommandsPerAcquire, r.Redis.Measured && r.Acquired > 0
			}, num1},
	}
	marks := recommendedMarks(s.Recommendations, strategies, values)
	for _, f := range figures {
		var ss []series
		for si, name := range strategies {
			sr := series{name: name, color: si}
			for i := range s.Results {
				r := &s.Results[i]
				x := slices.Index(values, r.ParamValue)
				v, ok := f.value(r)
				if r.Strategy != name || x < 0 || !ok {
					continue
				}
				sr.points = append(sr.points, pt(float64(x), v, name+" "+param+"="+r.ParamValue+": "+f.text(v)+" ("+orDash(r.Verdict)+")"))
			}
			if len(sr.points) > 0 {
				ss = append(ss, sr)
			}
		}
		if len(ss) == 0 {
			continue
		}
		c := chart{id: p.chartID(), kind: "sweep", title: f.title + " against " + param, x: xa, y: f.y, series: ss, vlines: marks}
		c.svg(&p.b)
	}
	if len(marks) > 0 {
		p.para("legend", "★ marks the value a recommendation names.")
	}
	p.list("recommend", s.Recommendations)
	p.end()
}

// recommendedMarks finds, per recommendation "STRATEGY: ...", the first swept value it
// names, and marks it.
func recommendedMarks(recs, strategies, values []string) []vline {
	var marks []vline
	for _, rec := range recs {
		name, text, ok := strings.Cut(rec, ": ")
		if !ok || !slices.Contains(strategies, name) {
			continue
		}
		best, at := -1, len(text)+1
		for i, v := range values {
			if j := valueIndex(text, v); j >= 0 && j < at {
				best, at = i, j
			}
		}
		if best < 0 {
			continue
		}
		if j := slices.IndexFunc(marks, func(m vline) bool { return m.x == float64(best) }); j >= 0 {
			marks[j].label += ", " + name // two recommendations of one value share a mark
			marks[j].title += "\n" + rec
			continue
		}
		marks = append(marks, vline{x: float64(best), label: "★ " + name, title: rec, class: "mark"})
	}
	return marks
}

// valueIndex is where v occurs in text as a whole word (after a space or '=', before a
// space, punctuation or the end), -1 when it does not.
func valueIndex(text, v string) int {
	for i := 0; i+len(v) <= len(text); {
		j := strings.Index(text[i:], v)
		if j < 0 {
			return -1
		}
		j += i
		end := j + len(v)
		before := j == 0 || text[j-1] == ' ' || text[j-1] == '='
		after := end == len(text) || strings.ContainsRune(" ,;:)", rune(text[end]))
		if before && after {
			return j
		}
		i = j + 1
	}
	return -1
}
