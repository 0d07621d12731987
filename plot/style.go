package plot

import (
	"image/color"
	"math"
	"strconv"
	"unicode/utf8"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/lockbench/lockbench/report"
)

// palette is Tableau 10: ten colours that stay apart on screen, on paper and for most
// colour-blind readers. Series beyond ten repeat them with a dash pattern.
var palette = []color.Color{
	color.RGBA{31, 119, 180, 255}, color.RGBA{255, 127, 14, 255}, color.RGBA{44, 160, 44, 255},
	color.RGBA{214, 39, 40, 255}, color.RGBA{148, 103, 189, 255}, color.RGBA{140, 86, 75, 255},
	color.RGBA{227, 119, 194, 255}, color.RGBA{127, 127, 127, 255}, color.RGBA{188, 189, 34, 255},
	color.RGBA{23, 190, 207, 255},
}

// dashPatterns are the line patterns of the 1st, 2nd, ... round through the palette.
var dashPatterns = [][]vg.Length{
	nil,
	{vg.Points(6), vg.Points(3)},
	{vg.Points(2), vg.Points(2)},
	{vg.Points(8), vg.Points(3), vg.Points(2), vg.Points(3)},
}

// Text sizes, in points.
const (
	titleSize  = 12
	labelSize  = 10
	legendSize = 9
	markSize   = 8
)

// maxLegendRunes is where a legend entry is cut ("…"), so that it fits its column.
const maxLegendRunes = 34

// guide is the style of reference lines (ideal rate, SLO): thin, grey, dashed.
var guide = draw.LineStyle{Color: color.Gray{Y: 110}, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(4), vg.Points(3)}}

// seriesColor is the colour of series i.
func seriesColor(i int) color.Color { return palette[i%len(palette)] }

// seriesLine is the line style of series i.
func seriesLine(i int) draw.LineStyle {
	return draw.LineStyle{
		Color:  seriesColor(i),
		Width:  vg.Points(1.5),
		Dashes: dashPatterns[(i/len(palette))%len(dashPatterns)],
	}
}

// panel is one plot of the image and the legend drawn beside it.
type panel struct {
	plot    *gplot.Plot
	legend  gplot.Legend
	entries int
}

// newPanel returns an empty panel with a title (which names the units), axis labels, a
// light grid and the legend placed for drawPanels.
func newPanel(title, xLabel, yLabel string) *panel {
	p := gplot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font = font.From(gplot.DefaultFont, titleSize)
	p.Title.Padding = vg.Points(6)
	p.X.Label.Text, p.Y.Label.Text = xLabel, yLabel
	p.X.Label.TextStyle.Font = font.From(gplot.DefaultFont, labelSize)
	p.Y.Label.TextStyle.Font = font.From(gplot.DefaultFont, labelSize)
	p.Add(plotter.NewGrid())
	l := gplot.NewLegend()
	l.Top, l.Left = true, true
	l.TextStyle.Font = font.From(gplot.DefaultFont, legendSize)
	l.Padding = vg.Points(2)
	return &panel{plot: p, legend: l}
}

// addLine adds series i (colour, dashes) named name; with points, each point gets a dot.
// Points with a non-finite coordinate are dropped; an empty series adds nothing.
func (pn *panel) addLine(name string, i int, xys plotter.XYs, points bool) {
	var dots plotter.XYs
	if points {
		dots = xys
	}
	pn.addSegments(name, i, []plotter.XYs{xys}, dots)
}

// addSegments adds series i named name as separate line segments (a gap between them is
// missing data, not a straight line), with a dot at each point of dots. A segment of one
// point is drawn as a dot. Points with a non-finite coordinate are dropped; a series with
// nothing left adds nothing.
func (pn *panel) addSegments(name string, i int, segments []plotter.XYs, dots plotter.XYs) {
	style := seriesLine(i)
	glyph := draw.GlyphStyle{Color: seriesColor(i), Radius: vg.Points(2.5), Shape: draw.CircleGlyph{}}
	var thumbs []gplot.Thumbnailer
	for _, seg := range segments {
		seg = finite(seg)
		switch len(seg) {
		case 0:
			continue
		case 1:
			dots = append(dots[:len(dots):len(dots)], seg[0])
			continue
		}
		line, err := plotter.NewLine(seg)
		if err != nil {
			continue // finite already dropped what NewLine refuses
		}
		line.LineStyle = style
		pn.plot.Add(line)
		if len(thumbs) == 0 {
			thumbs = append(thumbs, line)
		}
	}
	if dots = finite(dots); len(dots) > 0 {
		if scatter, err := plotter.NewScatter(dots); err == nil {
			scatter.GlyphStyle = glyph
			pn.plot.Add(scatter)
			thumbs = append(thumbs, scatter)
		}
	}
	if len(thumbs) > 0 {
		pn.addLegend(name, thumbs...)
	}
}

// addLegend adds a legend entry, cut to maxLegendRunes.
func (pn *panel) addLegend(name string, thumbs ...gplot.Thumbnailer) {
	pn.legend.Add(cut(name, maxLegendRunes), thumbs...)
	pn.entries++
}

// finite returns the points of xys whose coordinates are both finite.
func finite(xys plotter.XYs) plotter.XYs {
	out := xys[:0:0]
	for _, p := range xys {
		if !math.IsInf(p.X, 0) && !math.IsNaN(p.X) && !math.IsInf(p.Y, 0) && !math.IsNaN(p.Y) {
			out = append(out, p)
		}
	}
	return out
}

// logAxis makes a a log axis labelled by format (e.g. report.FormatUS for µs values). Call
// fixLogRange once the data is added.
func logAxis(a *gplot.Axis, format func(float64) string) {
	a.Scale = gplot.LogScale{}
	a.Tick.Marker = logTicks{format: format}
}

// fixLogRange makes a's range drawable on a log scale: positive, and not a single value.
// Data on log axes is clamped positive when added; an axis without data gets 1..10. The
// range then widens to the labelled ticks around it (see logTicks), so that both ends of
// the axis carry a label.
func fixLogRange(a *gplot.Axis) {
	safeLogRange(a)
	steps := []float64{1}
	if denseLog(a.Min, a.Max) {
		steps = []float64{1, 2, 5}
	}
	a.Min, a.Max = niceBelow(a.Min, steps), niceAbove(a.Max, steps)
}

// safeLogRange makes a's range positive and not a single value; an axis without data gets
// 1..10.
func safeLogRange(a *gplot.Axis) {
	if !(a.Min > 0) || math.IsInf(a.Min, 0) || math.IsInf(a.Max, 0) || a.Max < a.Min {
		a.Min, a.Max = 1, 10
	}
	if a.Min == a.Max {
		a.Min, a.Max = a.Min/2, a.Max*2
	}
}

// denseLog reports whether a log axis over [lo, hi] spans few enough decades to label 2 and
// 5 times each power of ten too.
func denseLog(lo, hi float64) bool {
	return math.Ceil(math.Log10(hi))-math.Floor(math.Log10(lo)) <= 2
}

// niceBelow is the largest step·10^k (k an integer) at or below v > 0.
func niceBelow(v float64, steps []float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(v)))
	best := p
	for _, s := range steps {
		if s*p <= v*(1+1e-9) {
			best = s * p
		}
	}
	return best
}

// niceAbove is the smallest step·10^k (k an integer) at or above v > 0.
func niceAbove(v float64, steps []float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, s := range steps {
		if s*p >= v*(1-1e-9) {
			return s * p
		}
	}
	return 10 * p
}

// fixLinearRange makes a's range drawable and, with fromZero, starts it at 0 (rates and
// counts read wrong on an axis that does not).
func fixLinearRange(a *gplot.Axis, fromZero bool) {
	if math.IsInf(a.Min, 0) || math.IsInf(a.Max, 0) || a.Max < a.Min {
		a.Min, a.Max = 0, 1
	}
	if fromZero {
		a.Min = math.Min(a.Min, 0)
	}
	if a.Min == a.Max {
		a.Max = a.Min + math.Max(1, math.Abs(a.Min)*0.1)
	}
}

// logTicks marks a log axis: labels at each power of ten, and at 2 and 5 times it when the
// axis spans less than two decades; minor ticks at the other integers.
type logTicks struct {
	format func(float64) string
}

// Ticks implements gplot.Ticker.
func (t logTicks) Ticks(lo, hi float64) []gplot.Tick {
	if !(lo > 0) || !(hi > lo) {
		return nil
	}
	first, last := math.Floor(math.Log10(lo)), math.Ceil(math.Log10(hi))
	dense := denseLog(lo, hi)
	var ticks []gplot.Tick
	for d := first; d <= last; d++ {
		for m := 1.0; m <= 9; m++ {
			v := m * math.Pow(10, d)
			if v < lo*(1-1e-9) || v > hi*(1+1e-9) {
				continue
			}
			tick := gplot.Tick{Value: v}
			if m == 1 || (dense && (m == 2 || m == 5)) {
				tick.Label = t.format(v)
			}
			ticks = append(ticks, tick)
		}
	}
	return ticks
}

// formatTicks relabels the default ticks with format (e.g. report.FormatRate: 40k).
type formatTicks struct {
	format func(float64) string
}

// Ticks implements gplot.Ticker.
func (t formatTicks) Ticks(lo, hi float64) []gplot.Tick {
	ticks := gplot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ticks {
		if ticks[i].Label != "" {
			ticks[i].Label = t.format(ticks[i].Value)
		}
	}
	return ticks
}

// formatCount labels a count axis: 0, 1, 2.5, 1000.
func formatCount(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }

// formatUS labels a latency axis whose values are µs: 85µs, 1.2ms, 3s.
func formatUS(v float64) string { return report.FormatUS(v) }

// mark is one labelled reference line across a panel's data area.
type mark struct {
	at    float64 // x (vertical mark) or y (horizontal mark) in data units
	label string
	style draw.LineStyle
}

// marks draws reference lines: vertical (fault events, a capacity maximum) or horizontal
// (an SLO), each with its label at the line's top or left end. Labels of vertical marks
// step down in three rows so that marks close together do not print over each other.
type marks struct {
	vertical bool
	list     []mark
}

// Plot implements gplot.Plotter.
func (ms *marks) Plot(c draw.Canvas, p *gplot.Plot) {
	trX, trY := p.Transforms(&c)
	sty := text.Style{
		Color:   color.Gray{Y: 60},
		Font:    font.From(gplot.DefaultFont, markSize),
		Handler: gplot.DefaultTextHandler,
		YAlign:  draw.YTop,
	}
	row := sty.Height("M") * 1.15
	for i, m := range ms.list {
		if ms.vertical {
			x := trX(m.at)
			if x < c.Min.X || x > c.Max.X {
				continue
			}
			c.StrokeLine2(m.style, x, c.Min.Y, x, c.Max.Y)
			ls, at := sty, vg.Point{X: x + vg.Points(2), Y: c.Max.Y - vg.Length(i%3)*row}
			if at.X+ls.Width(m.label) > c.Max.X { // no room on the right: write it on the left
				ls.XAlign, at.X = draw.XRight, x-vg.Points(2)
			}
			c.FillText(ls, at, m.label)
			continue
		}
		y := trY(m.at)
		if y < c.Min.Y || y > c.Max.Y {
			continue
		}
		c.StrokeLine2(m.style, c.Min.X, y, c.Max.X, y)
		ls := sty
		ls.YAlign = draw.YBottom
		c.FillText(ls, vg.Point{X: c.Min.X + vg.Points(3), Y: y + vg.Points(1)}, m.label)
	}
}

// DataRange implements gplot.DataRanger: the marks widen the axis they sit on so that they
// are seen, and leave the other axis to the data (an infinite range is neutral).
func (ms *marks) DataRange() (xmin, xmax, ymin, ymax float64) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, m := range ms.list {
		lo, hi = math.Min(lo, m.at), math.Max(hi, m.at)
	}
	if ms.vertical {
		return lo, hi, math.Inf(1), math.Inf(-1)
	}
	return math.Inf(1), math.Inf(-1), lo, hi
}

// cut shortens s to n runes with "…".
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}
