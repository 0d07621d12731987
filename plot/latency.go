package plot

import (
	"fmt"
	"math"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"

	"github.com/lockbench/lockbench/report"
)

// ticksPerHalfDistance is how many points the percentile curve has per halving of the
// distance to 100%: what HdrHistogram's own .hgrm output (and so its plotter) uses.
const ticksPerHalfDistance = 5

// percentileTicks label the x axis of the latency distribution, where x = 1/(1-p).
var percentileTicks = []gplot.Tick{
	{Value: 1, Label: "0%"}, {Value: 2, Label: "50%"}, {Value: 10, Label: "90%"},
	{Value: 100, Label: "99%"}, {Value: 1e3, Label: "99.9%"}, {Value: 1e4, Label: "99.99%"},
	{Value: 1e5, Label: "99.999%"}, {Value: 1e6, Label: "99.9999%"}, {Value: 1e7, Label: "99.99999%"},
}

// latencyPanel is acquire latency against percentile, one line per result that recorded
// acquires, coloured by the result's index (the same colour as in the timeline). nil when
// no result has an acquire histogram.
func latencyPanel(results []report.Result) (*panel, error) {
	pn := newPanel("Acquire latency by percentile (log scales)", "percentile", "acquire latency")
	pn.plot.X.Scale = gplot.LogScale{}
	pn.plot.X.Tick.Marker = gplot.ConstantTicks(percentileTicks)
	logAxis(&pn.plot.Y, formatUS)
	names := report.ResultNames(results)
	for i := range results {
		h, err := report.DecodeHistogram(results[i].Histograms.Acquire)
		if err != nil {
			return nil, fmt.Errorf("plot: %s: acquire %w", names[i], err)
		}
		if h.TotalCount() > 0 {
			pn.addLine(names[i], i, percentileCurve(h), false)
		}
	}
	if pn.entries == 0 {
		return nil, nil
	}
	// From 0% to the next labelled percentile past the data.
	pn.plot.X.Min = 1
	pn.plot.X.Max = math.Max(10, math.Pow(10, math.Ceil(math.Log10(pn.plot.X.Max))))
	fixLogRange(&pn.plot.Y)
	return pn, nil
}

// percentileCurve is h's value (µs, at least report.LowestUS so that the log axis can show
// it) at each percentile HdrHistogram's percentile iterator reports, against 1/(1-p). The
// 100% point is left out: 1/(1-p) is infinite there.
func percentileCurve(h *hdrhistogram.Histogram) plotter.XYs {
	var xys plotter.XYs
	for _, b := range h.CumulativeDistributionWithTicks(ticksPerHalfDistance) {
		if b.Quantile >= 100 {
			break
		}
		xys = append(xys, plotter.XY{
			X: 100 / (100 - b.Quantile),
			Y: float64(max(b.ValueAt, report.LowestUS)),
		})
	}
	return xys
}
