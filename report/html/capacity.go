package html

import (
	"strconv"
	"strings"
	"time"

	"github.com/lockbench/lockbench/report"
)

// capacity writes each strategy's capacity search: the answer, the staircase of steps as
// they ran with the maximum marked, acquire p99 against the offered rate with the SLO's
// bound, and the steps table.
func (p *page) capacity(s *report.Summary) {
	for ci, c := range s.Capacity {
		p.section("cap"+strconv.Itoa(ci), "Capacity of "+c.Strategy, "")
		p.para("answer", report.CapacityAnswer(c))
		if len(c.Steps) == 0 {
			p.end()
			continue
		}
		offered := series{name: "offered", color: 8, dashed: true}
		achieved := series{name: "achieved (failed steps hollow red)", color: 0}
		p99 := series{name: "acquire p99 (failed steps hollow red)", color: 1, marks: true}
		var ticks []tick
		var rows [][]cell
		for i, st := range c.Steps {
			x := float64(i + 1)
			ticks = append(ticks, tick{x, strconv.Itoa(i + 1)})
			result := stepResult(st)
			offered.points = append(offered.points, pt(x, st.Offered, "step "+strconv.Itoa(i+1)+" ("+st.Stage+"): offered "+report.FormatRate(st.Offered)+"/s"))
			achieved.points = append(achieved.points, pt(x, st.Achieved, "step "+strconv.Itoa(i+1)+": achieved "+report.FormatRate(st.Achieved)+"/s, "+result))
			achieved.fail = append(achieved.fail, !st.Pass)
			if st.P99US > 0 {
				p99.points = append(p99.points, pt(st.Offered, float64(st.P99US), "offered "+report.FormatRate(st.Offered)+"/s: p99 "+report.FormatUS(float64(st.P99US))+", "+result))
				p99.fail = append(p99.fail, !st.Pass)
			}
			rows = append(rows, []cell{{text: strconv.Itoa(i + 1)}, {text: st.Stage}, {text: report.FormatRate(st.Offered), num: true},
				{text: report.FormatRate(st.Achieved), num: true}, {text: count(st.Dropped), num: true},
				{text: us(st.P99US, st.P99US > 0), num: true}, {text: percent(st.TimeoutRate), num: true},
				{text: pick(st.RedisCPUPercent > 0, num1(st.RedisCPUPercent)+"%", "-"), num: true},
				{text: result, class: pick(st.Pass, "ok", "bad")}})
		}
		var maxMark []hline
		if c.MaxRate > 0 {
			maxMark = []hline{{y: c.MaxRate, label: "max in SLO " + report.FormatRate(c.MaxRate) + "/s"}}
		}
		ch := chart{id: p.chartID(), kind: "capacity", title: c.Strategy + ": the steps as they ran (SLO " + c.SLO + ")",
			x:      axis{label: "step", min: 0.5, max: float64(len(c.Steps)) + 0.5, ticks: ticks},
			y:      axis{label: "acquires/s", format: report.FormatRate},
			series: []series{offered, achieved}, hlines: maxMark}
		ch.svg(&p.b)
		if len(p99.points) > 0 {
			var slo []hline
			if bound, ok := sloP99(c.SLO); ok {
				slo = []hline{{y: float64(bound.Microseconds()), label: "SLO p99 " + report.FormatUS(float64(bound.Microseconds()))}}
			}
			var maxLine []vline
			if c.MaxRate > 0 {
				maxLine = []vline{{x: c.MaxRate, label: "max", title: report.CapacityAnswer(c), class: "mark"}}
			}
			ch = chart{id: p.chartID(), kind: "capacity", title: c.Strategy + ": acquire p99 against the offered rate (log scale)",
				x:      axis{label: "offered acquires/s (open loop)", format: report.FormatRate},
				y:      axis{label: "acquire p99", log: true, format: fmtUS},
				series: []series{p99}, hlines: slo, vlines: maxLine}
			ch.svg(&p.b)
		}
		p.table("steps", []string{"step", "stage", "offered/s", "achieved/s", "dropped", "p99", "timeouts", "Redis CPU", "result"}, rows)
		p.end()
	}
}

// stepResult is "PASS", or "FAIL: reason".
func stepResult(st report.CapacityStep) string {
	switch {
	case st.Pass:
		return "PASS"
	case st.Reason == "":
		return "FAIL"
	default:
		return "FAIL: " + st.Reason
	}
}

// sloP99 reads the p99 bound of an SLO such as "p99<=5ms timeouts<=0.1%".
func sloP99(slo string) (time.Duration, bool) {
	_, rest, ok := strings.Cut(slo, "p99<=")
	if !ok {
		return 0, false
	}
	d, err := time.ParseDuration(strings.Fields(rest + " ")[0])
	return d, err == nil && d > 0
}
