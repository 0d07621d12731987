package plot

import (
	"cmp"
	"image/color"
	"regexp"
	"slices"
	"strings"
	"time"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/lockbench/lockbench/report"
)

// capacityPanels are a capacity search's curves against the offered rate, one line per
// strategy through its steps: the achieved rate (with the ideal, achieved = offered) and the
// acquire p99 (with the SLO's p99 bound). Failed steps are crossed; each strategy's maximum
// is a vertical line. nil when no search has a step.
func capacityPanels(caps []report.Capacity) []*panel {
	const xLabel = "offered rate (acquires/s, open loop)"
	achieved := newPanel("Achieved vs offered rate (acquires/s)", xLabel, "achieved acquires/s")
	achieved.plot.Y.Tick.Marker = formatTicks{format: report.FormatRate}
	p99 := newPanel("Acquire p99 vs offered rate (log scale)", xLabel, "acquire p99")
	logAxis(&p99.plot.Y, formatUS)
	maxima := &marks{vertical: true}
	slos := &marks{}
	var lo, hi float64
	for i, c := range caps {
		steps := slices.SortedStableFunc(slices.Values(c.Steps), func(a, b report.CapacityStep) int {
			return cmp.Compare(a.Offered, b.Offered)
		})
		if len(steps) == 0 {
			continue
		}
		lo, hi = rangeWith(lo, hi, achieved.entries == 0, steps[0].Offered, steps[len(steps)-1].Offered)
		addSteps(achieved, c.Strategy, i, steps, func(st report.CapacityStep) float64 { return st.Achieved })
		addSteps(p99, c.Strategy, i, steps, func(st report.CapacityStep) float64 {
			return float64(max(st.P99US, report.LowestUS))
		})
		if c.MaxRate > 0 {
			maxima.list = append(maxima.list, mark{at: c.MaxRate, label: c.Strategy + " max " + report.FormatRate(c.MaxRate) + "/s",
				style: draw.LineStyle{Color: seriesColor(i), Width: vg.Points(1), Dashes: []vg.Length{vg.Points(3), vg.Points(2)}}})
		}
		if us, ok := sloP99US(c.SLO); ok && !slices.ContainsFunc(slos.list, func(m mark) bool { return m.at == us }) {
			slos.list = append(slos.list, mark{at: us, label: "SLO p99 " + report.FormatUS(us), style: guide})
		}
	}
	if achieved.entries == 0 {
		return nil
	}
	addIdeal(achieved, lo, hi)
	addFailedLegend(achieved)
	addFailedLegend(p99)
	for _, pn := range []*panel{achieved, p99} {
		if len(maxima.list) > 0 {
			pn.plot.Add(maxima)
		}
		pn.plot.X.Tick.Marker = formatTicks{format: report.FormatRate}
		fixLinearRange(&pn.plot.X, true)
	}
	if len(slos.list) > 0 {
		p99.plot.Add(slos)
	}
	fixLinearRange(&achieved.plot.Y, true)
	fixLogRange(&p99.plot.Y)
	return []*panel{achieved, p99}
}

// rangeWith widens [lo, hi] to hold [a, b]; first starts a new range.
func rangeWith(lo, hi float64, first bool, a, b float64) (float64, float64) {
	if first {
		return a, b
	}
	return min(lo, a), max(hi, b)
}

// failedGlyph crosses a step that did not meet the SLO.
func failedGlyph(c color.Color) draw.GlyphStyle {
	return draw.GlyphStyle{Color: c, Radius: vg.Points(4), Shape: boldCross{}}
}

// boldCross is an X drawn with a line thick enough to tell from a dot at a glance.
type boldCross struct{}

// DrawGlyph implements draw.GlyphDrawer.
func (boldCross) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	c.SetLineStyle(draw.LineStyle{Color: sty.Color, Width: vg.Points(1.8)})
	r := sty.Radius * 0.7071
	var p vg.Path
	p.Move(vg.Point{X: pt.X - r, Y: pt.Y - r})
	p.Line(vg.Point{X: pt.X + r, Y: pt.Y + r})
	p.Move(vg.Point{X: pt.X - r, Y: pt.Y + r})
	p.Line(vg.Point{X: pt.X + r, Y: pt.Y - r})
	c.Stroke(p)
}

// addSteps adds one strategy's steps as series i: a line through them, a dot on each step
// that met the SLO and a cross on each that did not.
func addSteps(pn *panel, name string, i int, steps []report.CapacityStep, y func(report.CapacityStep) float64) {
	var all, passed, failed plotter.XYs
	for _, st := range steps {
		p := plotter.XY{X: st.Offered, Y: y(st)}
		all = append(all, p)
		if st.Pass {
			passed = append(passed, p)
		} else {
			failed = append(failed, p)
		}
	}
	if len(all) == 1 {
		all = nil // one step: its glyph is the whole series
	}
	pn.addSegments(name, i, []plotter.XYs{all}, passed)
	if failed = finite(failed); len(failed) == 0 {
		return
	}
	if crosses, err := plotter.NewScatter(failed); err == nil {
		crosses.GlyphStyle = failedGlyph(seriesColor(i))
		pn.plot.Add(crosses)
		if len(passed) == 0 && len(all) == 0 {
			pn.addLegend(name, crosses) // nothing else names this series
		}
	}
}

// addIdeal draws achieved = offered over [lo, hi], the line a strategy follows until it
// saturates.
func addIdeal(pn *panel, lo, hi float64) {
	line, err := plotter.NewLine(plotter.XYs{{X: lo, Y: lo}, {X: hi, Y: hi}})
	if err != nil {
		return
	}
	line.LineStyle = guide
	pn.plot.Add(line)
	pn.addLegend("achieved = offered", line)
}

// addFailedLegend explains the crosses.
func addFailedLegend(pn *panel) {
	pn.addLegend("step failed the SLO", crossThumb{})
}

// crossThumb is the legend thumbnail of a failed step: a grey cross.
type crossThumb struct{}

// Thumbnail implements gplot.Thumbnailer.
func (crossThumb) Thumbnail(c *draw.Canvas) {
	c.DrawGlyph(failedGlyph(color.Gray{Y: 60}), c.Center())
}

var _ gplot.Thumbnailer = crossThumb{}

// sloP99 finds the p99 bound in an SLO such as "p99<=5ms timeouts<=0.1%".
var sloP99 = regexp.MustCompile(`p99\s*<=?\s*([0-9.]+\s*(?:ns|us|µs|ms|s|m|h))`)

// sloP99US is the SLO's p99 bound in µs, and whether it has one.
func sloP99US(slo string) (float64, bool) {
	m := sloP99.FindStringSubmatch(slo)
	if m == nil {
		return 0, false
	}
	d, err := time.ParseDuration(strings.ReplaceAll(m[1], " ", ""))
	if err != nil || d < time.Microsecond { // below the histograms' resolution
		return 0, false
	}
	return float64(d.Microseconds()), true
}
