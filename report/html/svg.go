package html

import (
	"math"
	"strconv"
	"strings"
)

// The charts are inline SVG written here: small, deterministic (the same Summary gives the
// same bytes) and complete without a script. Each point carries a <title> for hovering;
// script.js adds what needs a script (toggling series, zooming a time range) and reads only
// what the SVG already holds: pixel coordinates and the data-* attributes set here.

// Chart geometry in SVG user units; the SVG scales to its container's width.
const (
	chartW  = 720
	chartH  = 260
	marginL = 64
	marginR = 16
	marginT = 28
	marginB = 40
)

// maxHoverPoints bounds the hover circles of one series; a longer series draws its line
// only (its numbers are in the tables).
const maxHoverPoints = 200

// point is one value of a series; label is its hover text.
type point struct {
	x, y  float64
	label string
	x2    float64 // where a span ends (series.spans)
}

// series is one line (or set of bars) of a chart.
type series struct {
	name   string
	color  int // index into the palette (CSS classes c0..c9)
	points []point
	dashed bool
	dense  bool // many points: hover circles show only under the pointer
	bars   bool // draw bars from the x axis instead of a line
	spans  bool // draw each point as a bar from x to x2 at height y (a lane)
	marks  bool // draw points only, no line (e.g. pass/fail steps)
	fail   []bool
}

// vline is a vertical mark across the plot: a fault event, a recommendation, a maximum.
type vline struct {
	x     float64
	label string // short text drawn at the top
	title string // hover text
	class string // CSS class: event, mark
	href  string // where the mark links to (an anchor in the page), "" for none
}

// hline is a horizontal mark, e.g. an SLO bound.
type hline struct {
	y     float64
	label string
}

// tick is an axis tick at a data value.
type tick struct {
	v     float64
	label string
}

// axis describes one axis: its range, scale and tick labels.
type axis struct {
	label  string
	log    bool
	min    float64
	max    float64
	format func(float64) string // tick labels; nil: plain numbers
	ticks  []tick               // fixed ticks (categories, percentiles); nil: computed
}

// chart is one SVG figure.
type chart struct {
	id     string // element id, unique in the page
	title  string
	x, y   axis
	series []series
	vlines []vline
	hlines []hline
	// zoom, when set, names the group of charts whose x axis (a time axis, linear) zooms
	// together: dragging across one zooms every chart of the group.
	zoom string
	// kind is data-chart's value, which the browser check counts: timeline, latency,
	// evidence, sweep, capacity, compare.
	kind string
}

// palette has the series colours, also used as CSS classes; chosen to stay apart for
// colour-blind readers and in print.
var palette = []string{"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22"}

// fitRange sets an axis's missing range from the data: linear axes start at 0 unless the
// data go below it; log axes span the decades the data touch.
func (a *axis) fitRange(vals []float64) {
	if a.min != 0 || a.max != 0 {
		return
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range vals {
		if a.log && v <= 0 {
			continue
		}
		lo, hi = min(lo, v), max(hi, v)
	}
	switch {
	case math.IsInf(lo, 1):
		lo, hi = 0, 1
		if a.log {
			lo, hi = 1, 10
		}
	case a.log:
		lo, hi = math.Pow(10, math.Floor(math.Log10(lo))), math.Pow(10, math.Ceil(math.Log10(hi)))
		if lo == hi {
			hi = lo * 10
		}
	default:
		lo = min(lo, 0)
		if hi <= lo {
			hi = lo + 1
		}
		hi = niceCeil(hi)
	}
	a.min, a.max = lo, hi
}

// niceCeil rounds v up to 1, 2, 2.5 or 5 times a power of ten.
func niceCeil(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if v <= m*p*1.0000001 {
			return m * p
		}
	}
	return 10 * p
}

// pos maps a data value to [0,1] along the axis.
func (a *axis) pos(v float64) float64 {
	if a.log {
		if v <= 0 {
			v = a.min
		}
		return (math.Log10(v) - math.Log10(a.min)) / (math.Log10(a.max) - math.Log10(a.min))
	}
	return (v - a.min) / (a.max - a.min)
}

// tickList is the fixed ticks, or about five round ones (decades on a log axis).
func (a *axis) tickList() []tick {
	if a.ticks != nil {
		return a.ticks
	}
	label := func(v float64) string {
		if a.format != nil {
			return a.format(v)
		}
		return num(v)
	}
	var ts []tick
	if a.log {
		for v := a.min; v <= a.max*1.0001; v *= 10 {
			ts = append(ts, tick{v, label(v)})
		}
		return ts
	}
	step := niceCeil((a.max - a.min) / 5)
	for v := math.Ceil(a.min/step) * step; v <= a.max+step*1e-9; v += step {
		ts = append(ts, tick{v, label(v)})
	}
	return ts
}

// px and py map data to SVG coordinates inside the plot area.
func (c *chart) px(v float64) float64 { return marginL + c.x.pos(v)*(chartW-marginL-marginR) }
func (c *chart) py(v float64) float64 {
	return chartH - marginB - c.y.pos(v)*(chartH-marginT-marginB)
}

// svg writes the chart with its legend (HTML buttons, so that a script can toggle series)
// into b.
func (c *chart) svg(b *strings.Builder) {
	var xs, ys []float64
	for _, s := range c.series {
		for _, p := range s.points {
			xs, ys = append(xs, p.x), append(ys, p.y)
		}
	}
	for _, h := range c.hlines {
		ys = append(ys, h.y)
	}
	for _, v := range c.vlines {
		xs = append(xs, v.x)
	}
	c.x.fitRange(xs)
	c.y.fitRange(ys)

	b.WriteString(`<figure class="chart" id="` + c.id + `" data-chart="` + c.kind + `"`)
	if c.zoom != "" {
		b.WriteString(` data-zoom="` + esc(c.zoom) + `" data-x0="` + num(c.x.min) + `" data-x1="` + num(c.x.max) +
			`" data-px0="` + num(marginL) + `" data-px1="` + num(chartW-marginR) + `"`)
	}
	b.WriteString(">\n<figcaption>" + esc(c.title))
	if c.zoom != "" {
		b.WriteString(` <span class="hint">drag across the chart to zoom a time range</span>`)
	}
	b.WriteString("</figcaption>\n")
	b.WriteString(`<svg viewBox="0 0 ` + strconv.Itoa(chartW) + " " + strconv.Itoa(chartH) + `" role="img" aria-label="` + esc(c.title) + `">` + "\n")
	c.axes(b)
	clip := c.id + "-clip"
	b.WriteString(`<clipPath id="` + clip + `"><rect x="` + num(marginL) + `" y="0" width="` +
		num(chartW-marginL-marginR) + `" height="` + num(chartH-marginB) + `"/></clipPath>` + "\n")
	b.WriteString(`<g class="plot" clip-path="url(#` + clip + `)">` + "\n")
	for _, h := range c.hlines {
		y := num(c.py(h.y))
		b.WriteString(`<line class="hmark" x1="` + num(marginL) + `" x2="` + num(chartW-marginR) + `" y1="` + y + `" y2="` + y + `"/>`)
		b.WriteString(`<text class="hmark" x="` + num(chartW-marginR-4) + `" y="` + num(c.py(h.y)-4) + `" text-anchor="end">` + esc(h.label) + "</text>\n")
	}
	for i, s := range c.series {
		c.seriesSVG(b, i, s)
	}
	for _, v := range c.vlines {
		x := num(c.px(v.x))
		if v.href != "" {
			b.WriteString(`<a href="` + esc(v.href) + `">`)
		}
		b.WriteString(`<g class="vmark ` + v.class + `"><title>` + esc(v.title) + `</title><line x1="` + x + `" x2="` + x +
			`" y1="` + num(marginT-6) + `" y2="` + num(chartH-marginB) + `"/><text x="` + x + `" y="` + num(marginT-8) +
			`" text-anchor="middle">` + esc(v.label) + "</text></g>")
		if v.href != "" {
			b.WriteString("</a>")
		}
		b.WriteString("\n")
	}
	b.WriteString("</g>\n</svg>\n")
	if len(c.series) > 1 {
		b.WriteString(`<div class="legend">`)
		for i, s := range c.series {
			b.WriteString(`<button type="button" class="key" data-series="` + strconv.Itoa(i) + `"><span class="sw c` +
				strconv.Itoa(s.color%len(palette)) + `"></span>` + esc(s.name) + "</button>")
		}
		b.WriteString("</div>\n")
	}
	b.WriteString("</figure>\n")
}

// axes draws the frame, the ticks and the axis labels.
func (c *chart) axes(b *strings.Builder) {
	x0, x1, y0, y1 := num(marginL), num(chartW-marginR), num(chartH-marginB), num(marginT)
	b.WriteString(`<g class="axes"><path d="M` + x0 + " " + y1 + "V" + y0 + "H" + x1 + `"/>` + "\n")
	b.WriteString(`<g class="xticks">`)
	for _, t := range c.x.tickList() {
		if t.v < c.x.min || t.v > c.x.max {
			continue
		}
		x := num(c.px(t.v))
		b.WriteString(`<line x1="` + x + `" x2="` + x + `" y1="` + y0 + `" y2="` + num(chartH-marginB+4) + `"/><text x="` + x +
			`" y="` + num(chartH-marginB+16) + `" text-anchor="middle">` + esc(t.label) + "</text>")
	}
	b.WriteString("</g>\n")
	for _, t := range c.y.tickList() {
		if t.v < c.y.min || t.v > c.y.max {
			continue
		}
		y := num(c.py(t.v))
		b.WriteString(`<line class="grid" x1="` + x0 + `" x2="` + x1 + `" y1="` + y + `" y2="` + y + `"/><text x="` +
			num(marginL-6) + `" y="` + num(c.py(t.v)+4) + `" text-anchor="end">` + esc(t.label) + "</text>")
	}
	b.WriteString("\n" + `<text class="alabel" x="` + num((marginL+chartW-marginR)/2) + `" y="` + num(chartH-6) +
		`" text-anchor="middle">` + esc(c.x.label) + "</text>")
	b.WriteString(`<text class="alabel" x="12" y="` + num(marginT+(chartH-marginT-marginB)/2) + `" text-anchor="middle" transform="rotate(-90 12 ` +
		num(marginT+(chartH-marginT-marginB)/2) + `)">` + esc(c.y.label) + "</text></g>\n")
}

// seriesSVG draws one series: a polyline (or bars, or marks) and hover circles.
func (c *chart) seriesSVG(b *strings.Builder, i int, s series) {
	color := "c" + strconv.Itoa(s.color%len(palette))
	if s.dense {
		color += " dense"
	}
	b.WriteString(`<g class="series ` + color + `" data-series="` + strconv.Itoa(i) + `" data-name="` + esc(s.name) +
		`" data-points="` + strconv.Itoa(len(s.points)) + `">`)
	switch {
	case s.spans:
		for _, p := range s.points {
			x0 := c.px(p.x)
			b.WriteString(`<rect class="span" x="` + num(x0) + `" y="` + num(c.py(p.y)-6) + `" width="` + num(max(c.px(p.x2)-x0, 0.5)) +
				`" height="12"><title>` + esc(p.label) + "</title></rect>")
		}
	case s.bars:
		w := (chartW - marginL - marginR) / (c.x.max - c.x.min) * 0.7 // one unit of x: a second, a category
		base := c.py(max(c.y.min, 0))
		for _, p := range s.points {
			y := c.py(p.y)
			b.WriteString(`<rect class="bar" x="` + num(c.px(p.x)-w/2) + `" y="` + num(y) + `" width="` + num(w) + `" height="` + num(max(base-y, 0)) +
				`" data-w="` + num(w) + `"><title>` + esc(p.label) + "</title></rect>")
		}
	default:
		if !s.marks && len(s.points) > 1 {
			b.WriteString(`<polyline points="`)
			for j, p := range s.points {
				if j > 0 {
					b.WriteByte(' ')
				}
				b.WriteString(num(c.px(p.x)) + "," + num(c.py(p.y)))
			}
			b.WriteString(`"`)
			if s.dashed {
				b.WriteString(` stroke-dasharray="5 3"`)
			}
			b.WriteString("/>")
		}
		if len(s.points) <= maxHoverPoints || s.marks {
			for j, p := range s.points {
				cls := ""
				if j < len(s.fail) && s.fail[j] {
					cls = ` class="fail"`
				}
				b.WriteString(`<circle` + cls + ` cx="` + num(c.px(p.x)) + `" cy="` + num(c.py(p.y)) + `" r="3"><title>` + esc(p.label) + "</title></circle>")
			}
		}
	}
	b.WriteString("</g>\n")
}

// num formats a coordinate or value compactly: at most two decimals, trailing zeros cut.
func num(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "0"
	}
	s := strconv.FormatFloat(v, 'f', 2, 64)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	if s == "-0" {
		return "0"
	}
	return s
}
