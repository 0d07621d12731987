package html

import (
	"strconv"

	"github.com/lockbench/lockbench/report"
)

// comparison writes run B against baseline A: the regressions first, then per result a
// chart of B/A per metric (1 = unchanged, regressions red) and the table of both runs.
func (p *page) comparison(c *report.Comparison) {
	p.b.WriteString("<header>\n<h1>lockbench comparison</h1>\n")
	p.dl("meta", [][2]string{{"A (baseline)", c.A}, {"B", c.B},
		{"regression", "a change worse than " + percent(c.Threshold) + ", or any overlap, stuck key or misdelete where A had none"},
		{"version", c.Version}})
	p.b.WriteString("</header>\n")
	p.section("regressions", "Regressions", "")
	if len(c.Regressions) == 0 {
		p.para("ok", "No regressions (threshold "+percent(c.Threshold)+").")
	} else {
		p.para("alert", plural(len(c.Regressions), "regression")+" (threshold "+percent(c.Threshold)+"):")
		p.list("regressions", c.Regressions)
	}
	if len(c.OnlyA) > 0 {
		p.para("", "only in A: "+joinComma(c.OnlyA))
	}
	if len(c.OnlyB) > 0 {
		p.para("", "only in B: "+joinComma(c.OnlyB))
	}
	p.end()
	for i, row := range c.Rows {
		p.section("cmp"+strconv.Itoa(i), row.Name, "result")
		same := series{name: "B/A", color: 0, bars: true}
		worse := series{name: "B/A, regression", color: 1, bars: true}
		var ticks []tick
		var rows [][]cell
		for j, m := range row.Metrics {
			ticks = append(ticks, tick{float64(j), strconv.Itoa(j + 1)})
			ratio := "-"
			if m.Comparable {
				ratio = strconv.FormatFloat(m.Ratio, 'f', 2, 64)
				pt := pt(float64(j), m.Ratio, m.Metric+": B/A "+ratio+pick(m.Regression, " (regression)", ""))
				if m.Regression {
					worse.points = append(worse.points, pt)
				} else {
					same.points = append(same.points, pt)
				}
			}
			rows = append(rows, []cell{{text: strconv.Itoa(j + 1)}, {text: m.Metric}, {text: metricValue(m.A, m.AMeasured), num: true},
				{text: metricValue(m.B, m.BMeasured), num: true}, {text: ratio, num: true},
				{text: pick(m.Regression, "REGRESSION", ""), class: pick(m.Regression, "bad", "")}})
		}
		if len(same.points)+len(worse.points) > 0 {
			ch := chart{id: p.chartID(), kind: "compare", title: row.Name + ": B/A per metric (1 = unchanged)",
				x:      axis{label: "metric (numbered as in the table)", min: -0.6, max: float64(len(row.Metrics)) - 0.4, ticks: ticks},
				y:      axis{label: "B/A"},
				series: []series{same, worse}, hlines: []hline{{y: 1, label: "A"}}}
			ch.svg(&p.b)
		}
		p.table("compare", []string{"#", "metric", "A", "B", "B/A", ""}, rows)
		p.end()
	}
}

// metricValue formats a compared value, "-" when its run did not measure it.
func metricValue(v float64, measured bool) string {
	if !measured {
		return "-"
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

func joinComma(s []string) string {
	out := ""
	for i, v := range s {
		if i > 0 {
			out += ", "
		}
		out += v
	}
	return out
}
