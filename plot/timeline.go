package plot

import (
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/lockbench/lockbench/report"
)

// maxEventLabelRunes is where a fault event's label is cut on the timeline.
const maxEventLabelRunes = 28

// timelinePanels are acquires per second and acquire p99 per second against time, one line
// per result with a timeline (each phase's time starts at its measured window), with its
// fault events as vertical lines in its colour. nil when no result has a timeline.
func timelinePanels(results []report.Result) []*panel {
	const xLabel = "time since the measured window began (s)"
	rate := newPanel("Acquires per second", xLabel, "acquires/s")
	rate.plot.Y.Tick.Marker = formatTicks{format: report.FormatRate}
	p99 := newPanel("Acquire p99 per second (log scale)", xLabel, "acquire p99")
	logAxis(&p99.plot.Y, formatUS)
	names := report.ResultNames(results)
	for i := range results {
		r := &results[i]
		if len(r.Timeline) == 0 {
			continue
		}
		rate.addLine(names[i], i, ratePoints(r.Timeline), false)
		p99.addSegments(names[i], i, p99Segments(r.Timeline), nil)
		if events := eventMarks(r.Events, i); len(events.list) > 0 {
			rate.plot.Add(events)
			p99.plot.Add(events)
		}
	}
	if rate.entries == 0 {
		return nil
	}
	fixLinearRange(&rate.plot.X, true)
	fixLinearRange(&rate.plot.Y, true)
	fixLinearRange(&p99.plot.X, true)
	fixLogRange(&p99.plot.Y)
	if p99.entries == 0 { // no second recorded an acquire
		return []*panel{rate}
	}
	return []*panel{rate, p99}
}

// ratePoints are acquires per second: each point's count over the time since the previous
// point (the last one may be a partial second).
func ratePoints(timeline []report.Second) plotter.XYs {
	var xys plotter.XYs
	prev := 0.0
	for _, sec := range timeline {
		if dt := sec.TS - prev; dt > 0 {
			xys = append(xys, plotter.XY{X: sec.TS, Y: float64(sec.Acquired) / dt})
		}
		prev = sec.TS
	}
	return xys
}

// p99Segments are each second's acquire p99 (µs), in runs of consecutive seconds that
// recorded acquires: a second without any has no p99, and the line breaks there (the rate
// panel shows it at 0).
func p99Segments(timeline []report.Second) []plotter.XYs {
	var segs []plotter.XYs
	var cur plotter.XYs
	for _, sec := range timeline {
		if sec.P99US <= 0 {
			if len(cur) > 0 {
				segs, cur = append(segs, cur), nil
			}
			continue
		}
		cur = append(cur, plotter.XY{X: sec.TS, Y: float64(sec.P99US)})
	}
	if len(cur) > 0 {
		segs = append(segs, cur)
	}
	return segs
}

// eventMarks are a result's fault events in the measured window (warm-up events, at
// negative times, are left out) as dashed vertical lines in series i's colour.
func eventMarks(events []report.Event, i int) *marks {
	ms := &marks{vertical: true}
	style := draw.LineStyle{Color: seriesColor(i), Width: vg.Points(1), Dashes: []vg.Length{vg.Points(3), vg.Points(2)}}
	for _, e := range events {
		if e.TS < 0 {
			continue
		}
		label := e.What
		if label == "" {
			label = e.Fault
		}
		ms.list = append(ms.list, mark{at: e.TS, label: cut(label, maxEventLabelRunes), style: style})
	}
	return ms
}
