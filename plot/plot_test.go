package plot

import (
	"bytes"
	"encoding/xml"
	"errors"
	"image"
	"image/color"
	"image/png"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"gonum.org/v1/plot/vg"

	"github.com/lockbench/lockbench/report"
)

// phase builds a Result the way the engine does: latencies recorded into report.NewHistogram,
// then PercentilesOf and EncodeHistogram, so that the plotted percentiles are real. The
// acquire latencies (µs) are exponential around meanUS with 0.5% stalls of stallUS.
func phase(t *testing.T, rng *rand.Rand, strategy string, n int, meanUS, stallUS float64) report.Result {
	t.Helper()
	acquire, handoff := report.NewHistogram(), report.NewHistogram()
	for range n {
		v := meanUS * rng.ExpFloat64()
		if rng.IntN(200) == 0 {
			v += stallUS
		}
		if err := acquire.RecordValue(int64(v)); err != nil {
			t.Fatal(err)
		}
		if err := handoff.RecordValue(int64(2 * v)); err != nil {
			t.Fatal(err)
		}
	}
	r := report.Result{
		Strategy: strategy, Wait: "pubsub", TTLMS: 10000, DurationS: 10, Workers: 50, Keys: 16,
		Acquired: uint64(n), AcquireRate: float64(n) / 10, Verdict: "safe",
		LatencyUS: report.Latencies{Acquire: report.PercentilesOf(acquire), Handoff: report.PercentilesOf(handoff)},
	}
	var err error
	if r.Histograms.Acquire, err = report.EncodeHistogram(acquire); err != nil {
		t.Fatal(err)
	}
	if r.Histograms.Handoff, err = report.EncodeHistogram(handoff); err != nil {
		t.Fatal(err)
	}
	return r
}

// timeline is 10 seconds around rate acquires/s with p99 near p99US, and a stall from 4s to
// 6s (no acquires in the 5th second, a p99 of 2s in the 6th).
func timeline(rng *rand.Rand, rate float64, p99US int64) []report.Second {
	var secs []report.Second
	for i := 1; i <= 10; i++ {
		sec := report.Second{TS: float64(i) + 0.001*rng.Float64(), Acquired: uint64(rate * (0.9 + 0.2*rng.Float64())), P99US: p99US}
		switch i {
		case 5:
			sec.Acquired, sec.P99US = 0, 0
		case 6:
			sec.P99US = 2_000_000
		}
		secs = append(secs, sec)
	}
	secs[9].TS = 9.6 // the last sample is a partial second
	secs[9].Acquired = secs[9].Acquired * 6 / 10
	return secs
}

// built keeps the summaries that the tests share: recording their histograms under -race
// costs more than most renders. Each caller gets a copy it may change.
var built struct {
	sync.Mutex
	run, sweep *report.Summary
}

// runSummary is a run of three strategies with timelines; redlock had a node paused.
func runSummary(t *testing.T) *report.Summary {
	t.Helper()
	built.Lock()
	defer built.Unlock()
	if built.run == nil {
		built.run = buildRunSummary(t)
	}
	return copySummary(built.run)
}

// sweepSummary is a ttl sweep of token and fenced; token overlaps at short ttls.
func sweepSummary(t *testing.T) *report.Summary {
	t.Helper()
	built.Lock()
	defer built.Unlock()
	if built.sweep == nil {
		built.sweep = buildSweepSummary(t)
	}
	return copySummary(built.sweep)
}

// copySummary copies what the tests change: the results and the sweep.
func copySummary(s *report.Summary) *report.Summary {
	c := *s
	c.Results = slices.Clone(s.Results)
	if s.Sweep != nil {
		sweep := *s.Sweep
		sweep.Values = slices.Clone(s.Sweep.Values)
		c.Sweep = &sweep
	}
	return &c
}

func buildRunSummary(t *testing.T) *report.Summary {
	rng := rand.New(rand.NewPCG(1, 1))
	token := phase(t, rng, "token", 50000, 300, 20000)
	setnx := phase(t, rng, "set-nx-del", 40000, 500, 200000)
	redlock := phase(t, rng, "redlock", 8000, 2500, 900000)
	token.Timeline = timeline(rng, 5000, 1200)
	setnx.Timeline = timeline(rng, 4000, 5600)
	redlock.Timeline = timeline(rng, 800, 9000)
	redlock.Events = []report.Event{
		{TS: -0.5, Fault: "warm", What: "warm-up event, not drawn"},
		{TS: 4, Fault: "pause:redis2@4s+2s", What: "node 2 paused for 2s"},
		{TS: 6, Fault: "pause:redis2@4s+2s", What: "node 2 resumed"},
	}
	return &report.Summary{
		Tool: "lockbench", Version: "test", StartedAt: time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC),
		Results: []report.Result{token, setnx, redlock},
	}
}

func buildSweepSummary(t *testing.T) *report.Summary {
	rng := rand.New(rand.NewPCG(2, 2))
	s := &report.Summary{Tool: "lockbench", Kind: report.KindSweep, Sweep: &report.Sweep{Param: "ttl", Values: []string{"200ms", "1s", "5s", "30s"}}}
	for _, ttl := range s.Sweep.Values {
		for i, strategy := range []string{"token", "fenced"} {
			r := phase(t, rng, strategy, 5000, 300*float64(i+1), 50000)
			r.Label, r.ParamValue = strategy+" ttl="+ttl, ttl
			if strategy == "token" && ttl == "200ms" {
				r.Safety.Overlaps, r.Verdict = 41, "UNSAFE: 41 overlaps"
			}
			s.Results = append(s.Results, r)
		}
	}
	return s
}

// capacitySummary is a capacity search of two strategies; redlock failed its first step.
func capacitySummary() *report.Summary {
	const slo = "p99<=5ms timeouts<=0.1%"
	return &report.Summary{
		Tool: "lockbench", Kind: report.KindCapacity,
		Capacity: []report.Capacity{
			{Strategy: "token", SLO: slo, MaxRate: 42100, CPUPercentAtMax: 87, Steps: []report.CapacityStep{
				{Stage: "ramp", Offered: 10000, Achieved: 9990, P99US: 1200, Pass: true},
				{Stage: "ramp", Offered: 20000, Achieved: 19980, P99US: 1500, Pass: true},
				{Stage: "ramp", Offered: 40000, Achieved: 39900, P99US: 2900, Pass: true},
				{Stage: "ramp", Offered: 80000, Achieved: 48800, P99US: 61000, Reason: "achieved 61% of offered"},
				{Stage: "bisect", Offered: 60000, Achieved: 48100, P99US: 7100, Reason: "p99 7.1ms > 5ms"},
				{Stage: "bisect", Offered: 42100, Achieved: 42080, P99US: 3300, Pass: true},
			}},
			{Strategy: "redlock", SLO: slo, Steps: []report.CapacityStep{
				{Stage: "ramp", Offered: 10000, Achieved: 3100, P99US: 120000, Reason: "p99 120ms > 5ms"},
			}},
		},
	}
}

func TestRenderPNGSize(t *testing.T) {
	tests := []struct {
		name    string
		summary *report.Summary
		panels  int
	}{
		{"run", runSummary(t), 3},          // latency, acquires/s, p99/s
		{"sweep", sweepSummary(t), 4},      // rate, p99, overlaps, latency
		{"capacity", capacitySummary(), 2}, // achieved, p99
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel() // rasterizing is slow under -race
			var buf bytes.Buffer
			if err := Render(&buf, "png", tt.summary); err != nil {
				t.Fatal(err)
			}
			img, err := png.Decode(&buf)
			if err != nil {
				t.Fatalf("the PNG does not decode: %v", err)
			}
			b := img.Bounds()
			if b.Dx() != WidthPX || b.Dy() != PanelHeightPX*tt.panels {
				t.Errorf("PNG is %dx%d, want %dx%d (%d panels)", b.Dx(), b.Dy(), WidthPX, PanelHeightPX*tt.panels, tt.panels)
			}
			if colours := distinctColours(img, 4); colours < 3 {
				t.Errorf("the PNG has %d colours: blank?", colours)
			}
		})
	}
}

// distinctColours counts the colours of img at every step-th pixel of each axis.
func distinctColours(img image.Image, step int) int {
	seen := map[color.Color]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += step {
		for x := b.Min.X; x < b.Max.X; x += step {
			seen[img.At(x, y)] = true
		}
	}
	return len(seen)
}

func TestRenderSVGParses(t *testing.T) {
	for name, s := range map[string]*report.Summary{"run": runSummary(t), "sweep": sweepSummary(t), "capacity": capacitySummary()} {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := Render(&buf, "SVG", s); err != nil {
				t.Fatal(err)
			}
			data := buf.String()
			dec := xml.NewDecoder(strings.NewReader(data))
			for {
				_, err := dec.Token()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatalf("the SVG does not parse: %v", err)
				}
			}
			if !strings.Contains(data, "<path") && !strings.Contains(data, "<polyline") {
				t.Errorf("the SVG draws no path")
			}
		})
	}
}

func TestWriteByExtension(t *testing.T) {
	t.Parallel() // rasterizing is slow under -race
	dir := t.TempDir()
	for _, name := range []string{"capacity.png", "capacity.SVG"} { // the smallest image
		path := filepath.Join(dir, name)
		if err := Write(path, capacitySummary()); err != nil {
			t.Fatalf("Write(%s): %v", name, err)
		}
		if fi, err := os.Stat(path); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v, size %v", name, err, fi)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "plots.png"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"run.pdf", "run", "run.png.txt", "plots.png", "out/"} {
		path := filepath.Join(dir, name)
		err := Write(path, runSummary(t))
		var fe *FormatError
		if !errors.As(err, &fe) || !strings.Contains(err.Error(), "valid: .png, .svg") {
			t.Errorf("Write(%s) = %v, want a *FormatError listing .png, .svg", name, err)
		}
		if fi, err := os.Stat(path); !os.IsNotExist(err) && !fi.IsDir() {
			t.Errorf("Write(%s) left a file behind", name)
		}
		if name == "plots.png" && !strings.Contains(err.Error(), "is a directory") {
			t.Errorf("Write(%s), a directory: %v; want it said", name, err)
		}
	}
	var fe *FormatError
	if err := Render(io.Discard, "gif", runSummary(t)); !errors.As(err, &fe) || !strings.Contains(err.Error(), "valid: png, svg") {
		t.Errorf("Render(gif) = %v, want a *FormatError listing png, svg", err)
	}
}

func TestRenderNothing(t *testing.T) {
	noData := &report.Summary{Tool: "lockbench", Results: []report.Result{{Strategy: "token"}}}
	emptyCapacity := &report.Summary{Kind: report.KindCapacity, Capacity: []report.Capacity{{Strategy: "token"}}}
	emptySweep := &report.Summary{Kind: report.KindSweep, Sweep: &report.Sweep{Param: "ttl"}}
	for name, s := range map[string]*report.Summary{
		"empty": {}, "no histograms": noData, "capacity without steps": emptyCapacity, "sweep without results": emptySweep,
	} {
		var buf bytes.Buffer
		if err := Render(&buf, "png", s); !errors.Is(err, ErrNothingToPlot) {
			t.Errorf("%s: Render = %v, want ErrNothingToPlot", name, err)
		}
		if buf.Len() > 0 {
			t.Errorf("%s: wrote %d bytes of image", name, buf.Len())
		}
	}
	if err := Render(io.Discard, "png", nil); err == nil {
		t.Errorf("Render(nil) succeeded")
	}
	bad := runSummary(t)
	bad.Results[1].Histograms.Acquire = "not base64!"
	if err := Render(io.Discard, "png", bad); err == nil || !strings.Contains(err.Error(), "set-nx-del") {
		t.Errorf("a corrupt histogram: err = %v, want an error naming set-nx-del", err)
	}
}

// TestRenderOddInput: inputs at the edges draw without error or panic.
func TestRenderOddInput(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	one := phase(t, rng, "token", 1, 300, 0) // one sample: one point
	zero := phase(t, rng, "token", 50, 0, 0) // every latency 0µs
	zero.AcquireRate = 0
	zero.Timeline = []report.Second{{TS: 1}} // one second, nothing acquired
	flat := phase(t, rng, "fenced", 100, 300, 0)
	flat.Timeline = []report.Second{{TS: 0}, {TS: 0}} // no time passed: no rate

	waitSweep := sweepSummary(t)
	waitSweep.Sweep = &report.Sweep{Param: "wait", Values: []string{"spin", "backoff", "pubsub"}}
	for i := range waitSweep.Results {
		waitSweep.Results[i].ParamValue = waitSweep.Sweep.Values[i%3]
	}
	workersSweep := sweepSummary(t) // numbers over a wide range: a log axis
	workersSweep.Sweep = &report.Sweep{Param: "workers", Values: []string{"1", "10", "100", "1000"}}
	for i := range workersSweep.Results {
		workersSweep.Results[i].ParamValue = workersSweep.Sweep.Values[i/2]
	}
	oneValue := sweepSummary(t)
	oneValue.Sweep.Values = []string{"1s"}
	for i := range oneValue.Results {
		oneValue.Results[i].ParamValue = "1s"
		oneValue.Results[i].Histograms = report.Histograms{}
		oneValue.Results[i].LatencyUS = report.Latencies{}
	}
	odd := capacitySummary()
	odd.Capacity[0].SLO = "timeouts<=1%" // no p99 bound
	odd.Capacity[0].Steps = []report.CapacityStep{{Offered: 1000}}
	odd.Capacity[1].SLO = "p99<=1ns" // below the resolution: no SLO line
	odd.Capacity[1].Steps = append(odd.Capacity[1].Steps, odd.Capacity[1].Steps[0])

	for name, s := range map[string]*report.Summary{
		"one sample":          {Results: []report.Result{one}},
		"zero latencies":      {Results: []report.Result{zero}},
		"no elapsed time":     {Results: []report.Result{flat}},
		"categorical sweep":   waitSweep,
		"log sweep":           workersSweep,
		"one swept value":     oneValue,
		"capacity edge cases": odd,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel() // rasterizing is slow under -race
			for _, format := range Formats() {
				// The PNG at a quarter of the resolution: the same drawing (vg lengths are
				// points), a sixteenth of the pixels to rasterize and encode.
				newCanvas := formats[format]
				if format == "png" {
					newCanvas = func(w, h vg.Length) vg.CanvasWriterTo { return pngCanvas(w, h, dpi/4) }
				}
				var buf bytes.Buffer
				if err := render(&buf, format, newCanvas, s); err != nil {
					t.Errorf("%s: %v", format, err)
				}
			}
		})
	}
}

func TestSweepAxis(t *testing.T) {
	tests := []struct {
		values      []string
		categorical bool
		log         bool
		pos1        float64
	}{
		{[]string{"200ms", "1s", "5s", "30s"}, false, true, 1},
		{[]string{"1", "2", "4"}, false, false, 2},
		{[]string{"spin", "pubsub"}, true, false, 1},
		{[]string{"1s", "spin"}, true, false, 1},
		{[]string{"NaN", "1"}, true, false, 1},
	}
	for _, tt := range tests {
		a := newSweepAxis(tt.values)
		if a.categorical != tt.categorical || a.log != tt.log || a.pos[tt.values[1]] != tt.pos1 {
			t.Errorf("newSweepAxis(%q) = categorical %v log %v pos[1] %v; want %v %v %v",
				tt.values, a.categorical, a.log, a.pos[tt.values[1]], tt.categorical, tt.log, tt.pos1)
		}
	}
}

func TestSLOP99(t *testing.T) {
	tests := []struct {
		slo string
		us  float64
		ok  bool
	}{
		{"p99<=5ms timeouts<=0.1%", 5000, true},
		{"timeouts<=0.1% p99 <= 250us", 250, true},
		{"p99<=1.5s", 1_500_000, true},
		{"timeouts<=0.1%", 0, false},
		{"p99<=fast", 0, false},
	}
	for _, tt := range tests {
		us, ok := sloP99US(tt.slo)
		if us != tt.us || ok != tt.ok {
			t.Errorf("sloP99US(%q) = %v, %v; want %v, %v", tt.slo, us, ok, tt.us, tt.ok)
		}
	}
}

func TestPercentileCurve(t *testing.T) {
	h := report.NewHistogram()
	for v := int64(1); v <= 10000; v++ {
		_ = h.RecordValue(v)
	}
	xys := percentileCurve(h)
	if len(xys) < 20 {
		t.Fatalf("%d points, want the percentile iterator's many", len(xys))
	}
	if xys[0].X != 1 {
		t.Errorf("first x = %v, want 1 (0%%)", xys[0].X)
	}
	for i := 1; i < len(xys); i++ {
		if xys[i].X < xys[i-1].X || xys[i].Y < xys[i-1].Y {
			t.Fatalf("the curve goes back at point %d: %v after %v", i, xys[i], xys[i-1])
		}
	}
	// At x = 100 (p99) the value is the histogram's p99.
	for _, p := range xys {
		if p.X >= 99.99 && p.X <= 100.01 && int64(p.Y) != h.ValueAtPercentile(99) {
			t.Errorf("value at 1/(1-0.99) = %v, want p99 %d", p.Y, h.ValueAtPercentile(99))
		}
	}
}
