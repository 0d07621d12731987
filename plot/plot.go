// Package plot draws a lockbench Summary as one PNG or SVG image of panels stacked
// vertically, chosen by what the summary holds:
//
//   - latency distribution: acquire latency against percentile (1/(1-p) on a log axis, as
//     HdrHistogram's plotter draws it), one line per result, from the results' HDR
//     histograms; whenever a result has one.
//   - timeline (runs): acquires per second and acquire p99 per second, per result, with the
//     fault events as vertical lines.
//   - sweep curves (Kind "sweep"): acquire rate, p99 and overlaps against the swept value,
//     one line per strategy.
//   - capacity curves (Kind "capacity"): achieved rate and p99 against the offered rate,
//     per strategy, with the SLO and each strategy's maximum marked.
//
// Images are WidthPX wide and PanelHeightPX high per panel. Legends sit in a column right
// of each panel's data, never over it. Like report, this package reads a Summary and keeps
// nothing.
package plot

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/lockbench/lockbench/internal/usage"
	"github.com/lockbench/lockbench/report"
)

// Image geometry, in pixels of the PNG (an SVG has the same size in CSS pixels).
const (
	WidthPX       = 1000 // image width
	PanelHeightPX = 350  // height of each panel
	legendPX      = 240  // width of the legend column right of each panel
	dpi           = 96   // PNG resolution; text sizes are in points (1/72 in)
)

// ErrNothingToPlot is returned for a summary with nothing to draw: no acquire histogram, no
// timeline, no sweep point and no capacity step.
var ErrNothingToPlot = errors.New("plot: nothing to plot: no result has an acquire histogram or a timeline, and there are no sweep points or capacity steps")

// formats maps each image format to the canvas that renders it at w×h.
var formats = map[string]func(w, h vg.Length) vg.CanvasWriterTo{
	"png": func(w, h vg.Length) vg.CanvasWriterTo { return pngCanvas(w, h, dpi) },
	"svg": func(w, h vg.Length) vg.CanvasWriterTo { return vgsvg.New(w, h) },
}

// pngCanvas is a PNG canvas of w×h rasterized at dotsPerInch: dpi for the images drawn, fewer
// in tests that need the drawing and not its pixels.
func pngCanvas(w, h vg.Length, dotsPerInch int) vg.CanvasWriterTo {
	return vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(dotsPerInch))}
}

// Formats returns the image formats Render accepts, sorted; Write accepts them as file
// extensions (".png").
func Formats() []string {
	names := make([]string, 0, len(formats))
	for name := range formats {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// FormatError reports an image format (or a file extension) that is not one of Formats().
// It is a usage error: the CLI maps it to exit code 2 (errors.As).
type FormatError struct {
	Value string // the format or the file extension asked for
	Path  string // the file, when the format came from its extension
	Dir   bool   // Path is a directory
}

// ExitCode is usage.ExitCode: the caller's input is wrong, as a command line reports it.
func (e *FormatError) ExitCode() int { return usage.ExitCode }

func (e *FormatError) Error() string {
	valid := "." + strings.Join(Formats(), ", .")
	switch {
	case e.Dir:
		return fmt.Sprintf("plot: %s is a directory: name an image file in it; valid: %s", e.Path, valid)
	case e.Path != "" && e.Value == "":
		return fmt.Sprintf("plot: %s has no image extension; valid: %s", e.Path, valid)
	case e.Path != "":
		return fmt.Sprintf("plot: %s: unknown image extension %q: valid: %s", e.Path, e.Value, valid)
	}
	return fmt.Sprintf("plot: unknown image format %q: valid: %s", e.Value, strings.Join(Formats(), ", "))
}

// CheckPath reports whether path's extension names an image format Write can produce, so
// that a command can refuse a bad --plot before it runs for minutes.
func CheckPath(path string) error {
	_, err := formatOfPath(path)
	return err
}

func formatOfPath(path string) (string, error) {
	if fi, err := os.Stat(path); (err == nil && fi.IsDir()) || strings.HasSuffix(path, "/") || strings.HasSuffix(path, string(filepath.Separator)) {
		return "", &FormatError{Path: path, Dir: true}
	}
	ext := filepath.Ext(path)
	format := strings.ToLower(strings.TrimPrefix(ext, "."))
	if _, ok := formats[format]; !ok {
		return "", &FormatError{Value: ext, Path: path}
	}
	return format, nil
}

// Write draws s into the file at path, in the format its extension names (.png, .svg; any
// case). The file is written only once the image is complete.
func Write(path string, s *report.Summary) error {
	format, err := formatOfPath(path)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := Render(&buf, format, s); err != nil {
		return err
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	return nil
}

// Render draws s as an image in format ("png" or "svg", any case) to w.
func Render(w io.Writer, format string, s *report.Summary) error {
	newCanvas, ok := formats[strings.ToLower(strings.TrimSpace(format))]
	if !ok {
		return &FormatError{Value: format}
	}
	return render(w, format, newCanvas, s)
}

// render draws s on a canvas from newCanvas and writes it to w.
func render(w io.Writer, format string, newCanvas func(w, h vg.Length) vg.CanvasWriterTo, s *report.Summary) (err error) {
	if s == nil {
		return errors.New("plot: no summary")
	}
	panels, err := panelsOf(s)
	if err != nil {
		return err
	}
	if len(panels) == 0 {
		return ErrNothingToPlot
	}
	// gonum/plot panics on input it cannot draw (a log axis over a zero, say). The panels
	// are built to avoid that; should one slip through, the user gets an error, not a crash.
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("plot: render: %v", r)
		}
	}()
	canvas := newCanvas(pixels(WidthPX), pixels(PanelHeightPX*len(panels)))
	drawPanels(draw.New(canvas), panels)
	if _, err := canvas.WriteTo(w); err != nil {
		return fmt.Errorf("plot: write %s: %w", format, err)
	}
	return nil
}

// pixels converts PNG pixels to vg lengths (points) at dpi.
func pixels(px int) vg.Length {
	return vg.Length(px) * vg.Inch / dpi
}

// panelsOf chooses the panels for s, in display order: the ones that answer the question of
// the run's kind first (for a run, the latency distribution is that answer).
func panelsOf(s *report.Summary) ([]*panel, error) {
	latency, err := latencyPanel(s.Results)
	if err != nil {
		return nil, err
	}
	var panels []*panel
	switch s.Kind {
	case report.KindSweep:
		panels = append(sweepPanels(s), latency)
	case report.KindCapacity:
		panels = append(capacityPanels(s.Capacity), latency)
	default:
		panels = append([]*panel{latency}, timelinePanels(s.Results)...)
	}
	return slices.DeleteFunc(panels, func(p *panel) bool { return p == nil }), nil
}

// drawPanels tiles c vertically, one panel per tile: the plot on the left, its legend in a
// column on the right.
func drawPanels(c draw.Canvas, panels []*panel) {
	pad := pixels(8)
	tiles := draw.Tiles{Rows: len(panels), Cols: 1, PadTop: pad, PadBottom: pad, PadLeft: pad, PadRight: pad, PadY: 2 * pad}
	legendW := pixels(legendPX)
	for i, p := range panels {
		tile := tiles.At(c, 0, i)
		p.plot.Draw(draw.Crop(tile, 0, -legendW, 0, 0))
		if p.entries > 0 {
			// Start the legend level with the top of the data area, below the title.
			top := -p.plot.Title.TextStyle.Height(p.plot.Title.Text) - p.plot.Title.Padding
			p.legend.Draw(draw.Crop(tile, tile.Size().X-legendW+pad, 0, 0, top))
		}
	}
}
