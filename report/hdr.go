package report

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Histogram conventions shared by every package that records or reads latencies.
// Values are recorded in microseconds.
const (
	// LowestUS is the lowest discernible value, in µs.
	LowestUS int64 = 1
	// HighestUS is the highest trackable value, in µs (1 h). Larger values fail to record.
	HighestUS int64 = 3_600_000_000
	// SignificantDigits is the value precision: 3 digits, i.e. 0.1% relative error.
	SignificantDigits = 3
)

// hgrmValueScale divides recorded values (µs) in .hgrm output, so that the file is in
// milliseconds: the unit HdrHistogram's plotter labels its axis with.
const hgrmValueScale = 1000.0

// hgrmTicksPerHalfDistance is the number of percentile rows per halving of the distance to
// 100%; 5 is what HdrHistogram's own tools print.
const hgrmTicksPerHalfDistance = 5

// NewHistogram returns an empty histogram with lockbench's conventions: values in µs from
// LowestUS to HighestUS at SignificantDigits. It is not safe for concurrent use.
func NewHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(LowestUS, HighestUS, SignificantDigits)
}

// EncodeHistogram returns h in HdrHistogram's compressed V2 encoding as base64 text, the form
// Histograms and Interval carry. A nil or empty histogram encodes as "".
func EncodeHistogram(h *hdrhistogram.Histogram) (string, error) {
	if h == nil || h.TotalCount() == 0 {
		return "", nil
	}
	b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return "", fmt.Errorf("encode histogram: %w", err)
	}
	return string(b), nil
}

// DecodeHistogram is the inverse of EncodeHistogram: "" decodes as a new empty histogram
// (NewHistogram).
func DecodeHistogram(s string) (*hdrhistogram.Histogram, error) {
	if s == "" {
		return NewHistogram(), nil
	}
	h, err := hdrhistogram.Decode([]byte(s))
	if err != nil {
		return nil, fmt.Errorf("decode histogram: %w", err)
	}
	return h, nil
}

// PercentilesOf summarizes h (values in µs). A nil or empty histogram gives all zeros.
// Percentiles are highest equivalent values, so P50 <= P90 <= P99 <= P999 <= Max.
func PercentilesOf(h *hdrhistogram.Histogram) Percentiles {
	if h == nil || h.TotalCount() == 0 {
		return Percentiles{}
	}
	v := h.ValueAtPercentilesSlice([]float64{50, 90, 99, 99.9})
	return Percentiles{
		Count: uint64(h.TotalCount()),
		P50:   v[0],
		P90:   v[1],
		P99:   v[2],
		P999:  v[3],
		Max:   h.Max(),
		Mean:  h.Mean(),
	}
}

// WriteHDRFiles writes two files per Result into dir (created if missing) and returns their
// paths, in Result order:
//
//   - <strategy>.hgrm: the percentile distribution of the acquire histogram, values in
//     milliseconds; the input of HdrHistogram's plotter (plotFiles.html).
//   - <strategy>.hlog: an HdrHistogram interval log (format 1.3), one acquire histogram per
//     Result.Intervals entry, values in µs, timestamps relative to the log's BaseTime.
//
// Results that share a strategy name get -2, -3, ... suffixes, in order.
func WriteHDRFiles(dir string, s *Summary) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("hdr files: %w", err)
	}
	var paths []string
	for i, base := range hdrFileBases(s.Results) {
		r := &s.Results[i]
		hgrm := filepath.Join(dir, base+".hgrm")
		if err := writeHGRM(hgrm, r); err != nil {
			return paths, err
		}
		paths = append(paths, hgrm)
		hlog := filepath.Join(dir, base+".hlog")
		if err := writeHLOG(hlog, r, s.StartedAt.UnixMilli()); err != nil {
			return paths, err
		}
		paths = append(paths, hlog)
	}
	return paths, nil
}

// hdrFileBases returns one file name stem per result: the strategy name made safe for a file
// system, with -2, -3, ... appended to repeats.
func hdrFileBases(results []Result) []string {
	used := make(map[string]bool, len(results))
	bases := make([]string, len(results))
	for i, r := range results {
		stem := fileStem(r.Strategy)
		base := stem
		for n := 2; used[base]; n++ {
			base = stem + "-" + strconv.Itoa(n)
		}
		used[base] = true
		bases[i] = base
	}
	return bases
}

// fileStem keeps letters, digits, '.', '-' and '_' of name and replaces anything else by '_'.
func fileStem(name string) string {
	stem := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '_'
	}, name)
	if strings.Trim(stem, ".") == "" {
		return "result"
	}
	return stem
}

// writeHGRM writes the acquire histogram's percentile distribution, in ms, to path.
func writeHGRM(path string, r *Result) error {
	h, err := DecodeHistogram(r.Histograms.Acquire)
	if err != nil {
		return fmt.Errorf("%s: acquire %w", r.Strategy, err)
	}
	var buf bytes.Buffer
	if _, err := h.PercentilesPrint(&buf, hgrmTicksPerHalfDistance, hgrmValueScale); err != nil {
		return fmt.Errorf("%s: print percentiles: %w", r.Strategy, err)
	}
	return writeFile(path, buf.Bytes())
}

// writeHLOG writes r.Intervals as an HdrHistogram interval log to path. The log's start time
// is the first interval's start (runStartMS, Unix ms, when there is none). Its base time is
// that start rounded down to a whole second, because the BaseTime line only carries whole
// seconds and readers add it back to every interval timestamp.
//
// The writer divides the Interval_Max column by 1e6 (it assumes nanoseconds and prints ms);
// with our µs values that column is in seconds. A comment line in the log says so.
func writeHLOG(path string, r *Result, runStartMS int64) error {
	startMS := runStartMS
	if len(r.Intervals) > 0 {
		startMS = r.Intervals[0].StartMS
	}
	baseMS := startMS - startMS%1000

	var buf bytes.Buffer
	lw := hdrhistogram.NewHistogramLogWriter(&buf)
	lw.SetBaseTime(baseMS)
	header := []func() error{
		lw.OutputLogFormatVersion,
		func() error {
			return lw.OutputComment(fmt.Sprintf("[lockbench acquire latency, strategy %s: values in microseconds; Interval_Max in seconds]", r.Strategy))
		},
		func() error { return lw.OutputStartTime(startMS) },
		func() error { return lw.OutputBaseTime(baseMS) },
		lw.OutputLegend,
	}
	for _, write := range header {
		if err := write(); err != nil {
			return fmt.Errorf("%s: hlog header: %w", r.Strategy, err)
		}
	}
	for i, iv := range r.Intervals {
		h, err := DecodeHistogram(iv.Acquire)
		if err != nil {
			return fmt.Errorf("%s: interval %d: %w", r.Strategy, i, err)
		}
		h.SetStartTimeMs(iv.StartMS)
		h.SetEndTimeMs(iv.EndMS)
		if err := lw.OutputIntervalHistogram(h); err != nil {
			return fmt.Errorf("%s: interval %d: %w", r.Strategy, i, err)
		}
	}
	return writeFile(path, buf.Bytes())
}

// writeFile writes data to path with mode 0644. The error names the path.
func writeFile(path string, data []byte) error {
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("hdr files: %w", err)
	}
	return nil
}
