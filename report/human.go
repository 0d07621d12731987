package report

// The human reports (table, markdown) print the same document whatever the kind of run; only
// its sections differ: one results table for a run, one table grouped by strategy for a
// sweep, one table of steps per strategy for a capacity search.

// section is one table of a human report, with a line above and lines below it.
type section struct {
	title string // a line above the table; "" for none
	grid  grid
	after []string // lines right below the table, e.g. a capacity search's answer
}

// humanReport is what the table and markdown reports print, in order.
type humanReport struct {
	header   []headerLine
	sections []section
	legend   []string
	notes    []string
}

// humanReportOf lays s out for a person, by its Kind.
func humanReportOf(s *Summary) humanReport {
	h := humanReport{header: runHeader(s), notes: noteLines(s)}
	switch s.Kind {
	case KindCapacity:
		h.sections = capacitySections(s.Capacity)
		h.legend = capacityLegend()
		if len(h.sections) == 0 {
			h.notes = append([]string{"note: the capacity search has no steps"}, h.notes...)
		}
	case KindSweep:
		h.sections = []section{{grid: sweepGrid(s)}}
		h.legend = legendLines(s.Results)
	default:
		h.sections = []section{{grid: resultsGrid(s.Results)}}
		h.legend = legendLines(s.Results)
	}
	return h
}
