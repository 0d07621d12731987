package report

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

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
	return string(encodeV2(h)), nil
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
//   - <name>.hgrm: the percentile distribution of the acquire histogram, values in
//     milliseconds; the input of HdrHistogram's plotter (plotFiles.html).
//   - <name>.hlog: an HdrHistogram interval log (format 1.3) with, for every second of
//     Result.Intervals, four histograms tagged acquire, release, handoff and hold, values in
//     nanoseconds (see writeHLOG).
//
// <name> is the result's name in the results table (ResultNames), made safe for a file
// name (see HDRFileBases): "token" for a plain run, "token-ttl=1s" for a sweep's or a
// profile's labeled phase. Every result gets files of its own.
func WriteHDRFiles(dir string, s *Summary) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("hdr files: %w", err)
	}
	names := ResultNames(s.Results)
	var paths []string
	for i, base := range HDRFileBases(s.Results) {
		r := &s.Results[i]
		hgrm := filepath.Join(dir, base+".hgrm")
		if err := writeHGRM(hgrm, r, names[i]); err != nil {
			return paths, err
		}
		paths = append(paths, hgrm)
		hlog := filepath.Join(dir, base+".hlog")
		if err := writeHLOG(hlog, r, names[i], s.StartedAt.UnixMilli()); err != nil {
			return paths, err
		}
		paths = append(paths, hlog)
	}
	return paths, nil
}

// maxFileStem bounds a file name stem, well within the 255 bytes file systems allow a name.
const maxFileStem = 200

// HDRFileBases returns the file name stem WriteHDRFiles gives each result: its name in the
// results table (ResultNames) made safe for a file system (see fileStem), e.g.
// "token-ttl=1s". No two are the same, even on a file system that ignores case: a repeat
// gets -2, -3, ... appended, in order.
func HDRFileBases(results []Result) []string {
	names := ResultNames(results)
	used := make(map[string]bool, len(results))
	bases := make([]string, len(results))
	for i, name := range names {
		stem := fileStem(name)
		base := stem
		for n := 2; used[strings.ToLower(base)]; n++ {
			base = stem + "-" + strconv.Itoa(n)
		}
		used[strings.ToLower(base)] = true
		bases[i] = base
	}
	return bases
}

// fileStem makes name safe as a file name on any file system: spaces become '-' (the
// words of a label stay apart), letters, digits and . - _ = + , stay, anything else
// (/ \ : * ? " < > |, control characters, non-ASCII) becomes '_'. A leading '.' or '-'
// (a hidden file, an option to the next command) becomes '_' too, and the stem is cut at
// maxFileStem bytes. An empty name is "result".
func fileStem(name string) string {
	stem := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9',
			r == '-', r == '_', r == '.', r == '=', r == '+', r == ',':
			return r
		case r == ' ':
			return '-'
		}
		return '_'
	}, strings.TrimSpace(name))
	if len(stem) > maxFileStem {
		stem = stem[:maxFileStem] // ASCII only by now: any cut is between characters
	}
	if stem == "" {
		return "result"
	}
	if stem[0] == '.' || stem[0] == '-' {
		stem = "_" + stem[1:]
	}
	return stem
}

// writeHGRM writes the acquire histogram's percentile distribution, in ms, to path. name is
// the result's, for errors.
func writeHGRM(path string, r *Result, name string) error {
	h, err := DecodeHistogram(r.Histograms.Acquire)
	if err != nil {
		return fmt.Errorf("%s: acquire %w", name, err)
	}
	var buf bytes.Buffer
	if _, err := h.PercentilesPrint(&buf, hgrmTicksPerHalfDistance, hgrmValueScale); err != nil {
		return fmt.Errorf("%s: print percentiles: %w", name, err)
	}
	return writeFile(path, buf.Bytes())
}

// HLOGTags are the tags of an .hlog's interval histograms, in the order each second lists
// them: the four histograms of Latencies.
var HLOGTags = []string{"acquire", "release", "handoff", "hold"}

// nsPerUS converts the recorded µs into the .hlog's ns.
const nsPerUS = 1000

// writeHLOG writes r.Intervals as an HdrHistogram interval log to path; name is the
// result's, for its comment line and errors.
//
// The log follows HdrHistogram's conventions, so that its tools read it as it is: values are
// in nanoseconds (HistogramLogProcessor divides by 1e6 by default and prints milliseconds;
// the writer's Interval_Max column is in ms too), every second has one histogram per tag
// (HLOGTags; "" intervals as empty histograms, so that each tag has the same timeline; pick
// one with HistogramLogProcessor's -tag) and, first, the acquire histogram once more
// without a tag: HistogramLogProcessor reads only untagged lines when not given -tag (and
// fails on a log without any), so its plain invocation reports acquire latency; and
// StartTime and BaseTime carry milliseconds. Both are the first
// interval's start (runStartMS, Unix ms, when there is none), so interval timestamps are
// seconds since the measured window began.
func writeHLOG(path string, r *Result, name string, runStartMS int64) error {
	startMS := runStartMS
	if len(r.Intervals) > 0 {
		startMS = r.Intervals[0].StartMS
	}
	var buf bytes.Buffer
	lw := hdrhistogram.NewHistogramLogWriter(&buf)
	lw.SetBaseTime(startMS)
	// The library's StartTime and BaseTime lines carry whole seconds; HdrHistogram's own
	// writer prints them with three decimals, which its readers (and this library's) parse.
	start := float64(startMS) / 1000
	iso := time.UnixMilli(startMS).UTC().Format("2006-01-02T15:04:05.000Z07:00")
	header := []func() error{
		lw.OutputLogFormatVersion,
		func() error {
			return lw.OutputComment(fmt.Sprintf("[lockbench %s: latencies in nanoseconds (HdrHistogram's convention), "+
				"one interval a second per tag: %s, and acquire again untagged (the tools' default); "+
				"Interval_Max in milliseconds]", name, strings.Join(HLOGTags, ", ")))
		},
		func() error {
			return lw.OutputComment(fmt.Sprintf("[StartTime: %.3f (seconds since epoch), %s]", start, iso))
		},
		func() error { return lw.OutputComment(fmt.Sprintf("[BaseTime: %.3f (seconds since epoch)]", start)) },
		lw.OutputLegend,
	}
	for _, write := range header {
		if err := write(); err != nil {
			return fmt.Errorf("%s: hlog header: %w", name, err)
		}
	}
	for i, iv := range r.Intervals {
		tagged := iv.tagged()
		for t, enc := range append([]string{tagged[0]}, tagged[:]...) {
			tag := "" // the untagged copy of acquire
			if t > 0 {
				tag = HLOGTags[t-1]
			}
			h, err := DecodeHistogram(enc)
			if err != nil {
				return fmt.Errorf("%s: interval %d: %s %w", name, i, tag, err)
			}
			ns := nanoseconds(h)
			ns.SetTag(tag)
			ns.SetStartTimeMs(iv.StartMS)
			ns.SetEndTimeMs(iv.EndMS)
			if err := lw.OutputIntervalHistogram(ns); err != nil {
				return fmt.Errorf("%s: interval %d: %w", name, i, err)
			}
		}
	}
	return writeFile(path, buf.Bytes())
}

// tagged returns iv's encoded histograms in HLOGTags order.
func (iv *Interval) tagged() [4]string {
	return [4]string{iv.Acquire, iv.Release, iv.Handoff, iv.Hold}
}

// taggedPtr returns pointers to iv's encoded histograms in HLOGTags order.
func (iv *Interval) taggedPtr() [4]*string {
	return [4]*string{&iv.Acquire, &iv.Release, &iv.Handoff, &iv.Hold}
}

// nanoseconds returns a copy of h (values in µs, as recorded) with values in ns, for
// HdrHistogram's tools: every recorded value v becomes v×1000, where v is the highest value
// equivalent to it in h. Percentiles of the copy, divided by 1000, are h's to within its
// precision (0.1%).
func nanoseconds(h *hdrhistogram.Histogram) *hdrhistogram.Histogram {
	ns := hdrhistogram.New(LowestUS, HighestUS*nsPerUS, SignificantDigits)
	for _, bar := range h.Distribution() {
		if bar.Count > 0 {
			_ = ns.RecordValues(min(bar.To, HighestUS)*nsPerUS, bar.Count) // in range, so no error
		}
	}
	return ns
}

// writeFile writes data to path with mode 0644. The error names the path.
func writeFile(path string, data []byte) error {
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("hdr files: %w", err)
	}
	return nil
}
