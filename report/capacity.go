package report

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
			after: []string{CapacityAnswer(c)},
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
		"REDIS CPU Redis CPU time in % of one core; RESULT whether the step met the SLO, and why not; - = nothing measured",
	}
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

// CapacityAnswer is the one line a capacity search answers, for strategy c.Strategy:
// "token: max 42.1k acquires/s within p99<=5ms timeouts<=0.1% (Redis CPU 87.2% of a core)",
// or "token: no step passed (SLO ...)" when no offered rate met the SLO.
func CapacityAnswer(c Capacity) string {
	if c.MaxRate <= 0 {
		line := c.Strategy + ": no step passed"
		if c.SLO != "" {
			line += " (SLO " + c.SLO + ")"
		}
		return line
	}
	line := c.Strategy + ": max " + FormatRate(c.MaxRate) + " acquires/s"
	if c.SLO != "" {
		line += " within " + c.SLO
	}
	if c.CPUPercentAtMax > 0 {
		line += " (Redis CPU " + formatPercent(c.CPUPercentAtMax) + " of a core)"
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
