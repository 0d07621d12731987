package report

import "strings"

// sweepValueHeader heads the parameter column of a sweep whose Summary.Sweep is missing.
const sweepValueHeader = "VALUE"

// sweepGrid is a sweep's results table: the swept parameter's value first, then the
// strategy and the columns of the results table. Rows are grouped by strategy (in order of
// first appearance), each group in result order, which is the order of the values.
func sweepGrid(s *Summary) grid {
	base := resultsGrid(s.Results)
	param := sweepValueHeader
	if s.Sweep != nil && s.Sweep.Param != "" {
		param = strings.ToUpper(s.Sweep.Param)
	}
	g := grid{
		header: append([]string{param, strategyHeader}, base.header[1:]...),
		text:   append([]bool{true, true}, base.text[1:]...),
	}
	names := sweepNames(s.Results, resultLabels(s.Results))
	for _, i := range groupByStrategy(s.Results) {
		value := s.Results[i].ParamValue
		if value == "" {
			value = "-"
		}
		g.rows = append(g.rows, append([]string{value, names[i]}, base.rows[i][1:]...))
	}
	return g
}

// groupByStrategy returns the indexes of results grouped by strategy, groups in order of
// first appearance, results within a group in their original order.
func groupByStrategy(results []Result) []int {
	var strategies []string
	groups := map[string][]int{}
	for i, r := range results {
		if _, seen := groups[r.Strategy]; !seen {
			strategies = append(strategies, r.Strategy)
		}
		groups[r.Strategy] = append(groups[r.Strategy], i)
	}
	order := make([]int, 0, len(results))
	for _, name := range strategies {
		order = append(order, groups[name]...)
	}
	return order
}

// sweepNames names the rows of a sweep: the strategy alone, since the value column says
// what varied; the full label (resultLabels) for a result without a ParamValue, and for every
// result of a strategy that has two results with the same value (something else varied too).
func sweepNames(results []Result, labels []string) []string {
	type key struct{ strategy, value string }
	seen := map[key]bool{}
	ambiguous := map[string]bool{}
	for _, r := range results {
		k := key{r.Strategy, r.ParamValue}
		if seen[k] {
			ambiguous[r.Strategy] = true
		}
		seen[k] = true
	}
	names := make([]string, len(results))
	for i, r := range results {
		names[i] = r.Strategy
		if r.ParamValue == "" || ambiguous[r.Strategy] {
			names[i] = labels[i]
		}
	}
	return names
}
