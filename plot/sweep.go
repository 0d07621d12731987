package plot

import (
	"cmp"
	"math"
	"slices"
	"strconv"
	"time"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"

	"github.com/lockbench/lockbench/report"
)

// sweepPanels are a sweep's curves: acquire rate, acquire p99 and (when any phase had some)
// overlaps against the swept value, one line per strategy. nil when no result carries a
// value.
func sweepPanels(s *report.Summary) []*panel {
	values := sweepValues(s)
	if len(values) == 0 {
		return nil
	}
	param := "value"
	if s.Sweep != nil && s.Sweep.Param != "" {
		param = s.Sweep.Param
	}
	axis := newSweepAxis(values)
	rate := newPanel("Acquire rate by "+param+" (acquires/s)", param, "acquires/s")
	rate.plot.Y.Tick.Marker = formatTicks{format: report.FormatRate}
	p99 := newPanel("Acquire p99 by "+param+" (log scale)", param, "acquire p99")
	logAxis(&p99.plot.Y, formatUS)
	overlaps := newPanel("Overlaps by "+param+" (two holders inside one key at once; 0 = safe)", param, "overlaps")
	overlaps.plot.Y.Tick.Marker = formatTicks{format: formatCount}
	anyOverlap := false
	for i, group := range byStrategy(s.Results) {
		var rxy, pxy, oxy plotter.XYs
		for _, r := range group {
			x, ok := axis.pos[r.ParamValue]
			if !ok {
				continue
			}
			rxy = append(rxy, plotter.XY{X: x, Y: r.AcquireRate})
			if r.LatencyUS.Acquire.Count > 0 {
				pxy = append(pxy, plotter.XY{X: x, Y: float64(max(r.LatencyUS.Acquire.P99, report.LowestUS))})
			}
			oxy = append(oxy, plotter.XY{X: x, Y: float64(r.Safety.Overlaps)})
			anyOverlap = anyOverlap || r.Safety.Overlaps > 0
		}
		name := group[0].Strategy
		rate.addLine(name, i, byX(rxy), true)
		p99.addLine(name, i, byX(pxy), true)
		overlaps.addLine(name, i, byX(oxy), true)
	}
	panels := []*panel{rate, p99}
	if anyOverlap {
		panels = append(panels, overlaps)
	}
	var kept []*panel
	for _, pn := range panels {
		if pn.entries == 0 {
			continue
		}
		axis.apply(&pn.plot.X)
		kept = append(kept, pn)
	}
	fixLinearRange(&rate.plot.Y, true)
	fixLogRange(&p99.plot.Y)
	fixLinearRange(&overlaps.plot.Y, true)
	return kept
}

// sweepValues are the swept values in the order given on the command line, then any value a
// result has that the list lacks, in result order.
func sweepValues(s *report.Summary) []string {
	var values []string
	if s.Sweep != nil {
		values = append(values, s.Sweep.Values...)
	}
	for _, r := range s.Results {
		if r.ParamValue != "" && !slices.Contains(values, r.ParamValue) {
			values = append(values, r.ParamValue)
		}
	}
	return values
}

// byStrategy groups results by strategy, groups in order of first appearance.
func byStrategy(results []report.Result) [][]*report.Result {
	var groups [][]*report.Result
	index := map[string]int{}
	for i := range results {
		r := &results[i]
		g, ok := index[r.Strategy]
		if !ok {
			g = len(groups)
			index[r.Strategy] = g
			groups = append(groups, nil)
		}
		groups[g] = append(groups[g], r)
	}
	return groups
}

// byX sorts points by x, keeping the order of equal xs.
func byX(xys plotter.XYs) plotter.XYs {
	slices.SortStableFunc(xys, func(a, b plotter.XY) int { return cmp.Compare(a.X, b.X) })
	return xys
}

// sweepAxis places swept values on the x axis: at their numbers when every value is a
// number or a duration (on a log scale when they span 20x or more), else one slot each in
// the given order. Ticks are labelled with the values as given.
type sweepAxis struct {
	pos         map[string]float64
	ticks       []gplot.Tick
	log         bool
	categorical bool
	n           int
}

// newSweepAxis lays out values.
func newSweepAxis(values []string) sweepAxis {
	a := sweepAxis{pos: map[string]float64{}, n: len(values)}
	nums, numeric := numericValues(values)
	a.categorical = !numeric
	lo, hi := slices.Min(nums), slices.Max(nums)
	if numeric && lo > 0 && hi/lo >= 20 {
		a.log = true
	}
	for i, v := range values {
		x := float64(i)
		if numeric {
			x = nums[i]
		}
		a.pos[v] = x
		a.ticks = append(a.ticks, gplot.Tick{Value: x, Label: v})
	}
	return a
}

// apply sets ax to the layout: ticks, scale, and for slots half a slot of room each side.
func (a sweepAxis) apply(ax *gplot.Axis) {
	ax.Tick.Marker = gplot.ConstantTicks(a.ticks)
	switch {
	case a.categorical:
		ax.Min, ax.Max = -0.5, float64(a.n)-0.5
	case a.log:
		ax.Scale = gplot.LogScale{}
		safeLogRange(ax) // the ticks are the values: no widening to round numbers
	default:
		fixLinearRange(ax, false)
	}
}

// numericValues parses every value as a number, or every value as a duration (in seconds),
// and reports whether one of the two worked. It always returns len(values) numbers (zeros
// when parsing failed).
func numericValues(values []string) ([]float64, bool) {
	nums := make([]float64, len(values))
	parsers := []func(string) (float64, error){
		func(v string) (float64, error) { return strconv.ParseFloat(v, 64) },
		func(v string) (float64, error) {
			d, err := time.ParseDuration(v)
			return d.Seconds(), err
		},
	}
	for _, parse := range parsers {
		ok := true
		for i, v := range values {
			n, err := parse(v)
			if err != nil || math.IsNaN(n) || math.IsInf(n, 0) {
				ok = false
				break
			}
			nums[i] = n
		}
		if ok {
			return nums, true
		}
	}
	clear(nums)
	return nums, false
}
