package report

import "strconv"

// The human form of a capacity search (Summary.Kind "capacity"): per strategy, the steps it
// ran and the answer, the highest offered rate that met the SLO.

// capacitySections is one section per strategy: its steps, and its answer below them.
func capacitySections(caps []Capacity) []section {
	sections := make([]section, 0, len(caps))
	for _, c := range caps {
		title := c.Strategy
		if c.SLO != "" {
			title += " (SLO " + c.SLO + ")"
		}
		sections = append(sections, section{
			title: title,
			grid:  capacityGrid(c.Steps),
			after: capacityAfter(c),
		})
	}
	return sections
}

// capacityStepColumn is one column of the capacity steps table.
type capacityStepColumn struct {
	header string
	cell   func(st *CapacityStep) string
	text   bool
}

// capacityStepColumns are the columns of the steps table, in order.
func capacityStepColumns() []capacityStepColumn {
	return []capacityStepColumn{
		{header: "STAGE", cell: func(st *CapacityStep) string { return st.Stage }, text: true},
		{header: "OFFERED/S", cell: func(st *CapacityStep) string { return FormatRate(st.Offered) }},
		{header: "ACHIEVED/S", cell: func(st *CapacityStep) string { return FormatRate(st.Achieved) }},
		{header: "ACHIEVED", cell: achievedCell},
		{header: "DROPPED", cell: func(st *CapacityStep) string { return formatCount(st.Dropped) }},
		{header: "P99", cell: func(st *CapacityStep) string { return measuredCell(float64(st.P99US), FormatUS) }},
		{header: "TIMEOUTS", cell: func(st *CapacityStep) string { return formatPercent(st.TimeoutRate * 100) }},
		{header: "REDIS CPU", cell: func(st *CapacityStep) string { return measuredCell(st.RedisCPUPercent, formatPercent) }},
		{header: "LB CPU", cell: lockbenchCell},
		{header: "RTT", cell: func(st *CapacityStep) string { return measuredCell(float64(st.RoundTripUS), FormatUS) }},
		{header: "RESULT", cell: stepResult, text: true},
	}
}

// capacityGrid is the table of a capacity search's steps, in the order they ran.
func capacityGrid(steps []CapacityStep) grid {
	var g grid
	cols := capacityStepColumns()
	for _, c := range cols {
		g.header = append(g.header, c.header)
		g.text = append(g.text, c.text)
	}
	for i := range steps {
		row := make([]string, len(cols))
		for j, c := range cols {
			row[j] = c.cell(&steps[i])
		}
		g.rows = append(g.rows, row)
	}
	return g
}

// capacityLegend explains the steps table's headers.
func capacityLegend() []string {
	return []string{
		"OFFERED/S open-loop arrivals per second asked for; ACHIEVED/S acquires per second; ACHIEVED the share of offered achieved",
		"DROPPED arrivals that found no free worker; P99 acquire latency from the intended start; TIMEOUTS share of acquires timed out",
		"REDIS CPU Redis CPU time in % of one core; LB CPU lockbench's own cores busy / the cores it may use (GOMAXPROCS)",
		"RTT release p50, one round trip under the step's load",
		"RESULT whether the step met the SLO, and why not; - = nothing measured",
	}
}

// lockbenchCell is the cores lockbench kept busy of those it may use: "1.9/2".
func lockbenchCell(st *CapacityStep) string {
	if st.LockbenchCores == 0 {
		return "-"
	}
	return strconv.FormatFloat(st.LockbenchCPUPercent/100*float64(st.LockbenchCores), 'f', 1, 64) + "/" + strconv.Itoa(st.LockbenchCores)
}

// achievedCell is achieved as a percentage of offered, "-" when nothing was offered.
func achievedCell(st *CapacityStep) string {
	if st.Offered <= 0 {
		return "-"
	}
	return formatPercent(st.Achieved / st.Offered * 100)
}

// stepResult is "PASS", or "FAIL: reason".
func stepResult(st *CapacityStep) string {
	switch {
	case st.Pass:
		return "PASS"
	case st.Reason == "":
		return "FAIL"
	default:
		return "FAIL: " + st.Reason
	}
}

// CapacityAnswer is what a capacity search answers for strategy c.Strategy, with what
// bound it, in one line: "token: max 42.1k acquires/s within p99<=5ms timeouts<=0.1% (Redis
// CPU 87.2% of a core); bound by Redis CPU 92% of a core at 45k/s (lockbench 1.3/2)". When
// the client, not the server, was the bound it says "at least" and that the figure is
// lockbench's limit, never the server's capacity; "token: no step passed (SLO ...)" when
// no offered rate met the SLO.
func CapacityAnswer(c Capacity) string {
	if c.BoundBy == "" {
		return capacityFigure(c)
	}
	return capacityFigure(c) + "; " + capacityBound(c)
}

// capacityAfter is the answer below a strategy's steps table: the figure, then what bound
// it on a line of its own.
func capacityAfter(c Capacity) []string {
	if c.BoundBy == "" {
		return []string{capacityFigure(c)}
	}
	return []string{capacityFigure(c), "  " + capacityBound(c)}
}

func capacityBound(c Capacity) string { return "bound by " + c.BoundBy }

// capacityFigure is the answer's figure: the highest rate that met the SLO.
func capacityFigure(c Capacity) string {
	if c.MaxRate <= 0 {
		line := c.Strategy + ": no step passed"
		if c.SLO != "" {
			line += " (SLO " + c.SLO + ")"
		}
		return line
	}
	line := c.Strategy + ": max " + FormatRate(c.MaxRate) + " acquires/s"
	if c.ClientBound {
		line = c.Strategy + ": at least " + FormatRate(c.MaxRate) + " acquires/s"
	}
	if c.SLO != "" {
		line += " within " + c.SLO
	}
	if c.CPUPercentAtMax > 0 {
		line += " (Redis CPU " + formatPercent(c.CPUPercentAtMax) + " of a core)"
	}
	if c.ClientBound {
		line += ": lockbench's limit, not Redis's capacity"
	}
	return line
}

// formatPercent formats a percentage with three significant digits: 87.2%, 0.05%, 100%;
// a positive value too small to show is "<0.01%", never a misleading 0%.
func formatPercent(pct float64) string {
	if pct > 0 && pct < 0.005 {
		return "<0.01%"
	}
	if pct == 0 {
		return "0%"
	}
	return sig3(pct) + "%"
}
