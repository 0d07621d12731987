package live

import (
	"math"
	"slices"
	"sort"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// The acquire latency histogram is built from the engine's per-second HDR histograms, not
// by observing each acquisition: the engine already merged them once a second off the
// measured path, and adding one HDR bucket (a count, not one value at a time) keeps the
// export's cost per second proportional to the distinct latencies, not to the lock rate.
// Prometheus' own Histogram can only observe one value at a time, so the series is a
// Metric of our own with both classic buckets (for every Prometheus) and native ones
// (exponential, schema nativeSchema, for Prometheus with native histograms enabled).

// classicBoundsS are the classic bucket bounds, in seconds: lock latencies from tens of
// microseconds (a hit on loopback) to seconds (a queue behind a paused server).
var classicBoundsS = []float64{
	0.00005, 0.0001, 0.00025, 0.0005,
	0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
	0.1, 0.25, 0.5, 1, 2.5, 5, 10,
}

const (
	// nativeSchema 3: each bucket is 2^(1/8) ≈ 1.09 times the last (9% resolution).
	nativeSchema = 3
	// nativeZeroThresholdS: a latency recorded as 0 µs (the clock's resolution) is in the
	// zero bucket; HDR's lowest discernible value is 1 µs.
	nativeZeroThresholdS = 1e-7
)

// nativeBounds are the fraction bounds of one power of two at nativeSchema, as
// client_golang computes a bucket's index: 2^(i/8) / 2 for i in 0..7.
var nativeBounds = func() []float64 {
	n := 1 << nativeSchema
	b := make([]float64, n)
	for i := range b {
		b[i] = math.Exp2(float64(i)/float64(n)) / 2
	}
	return b
}()

// nativeIndex is the native bucket v (> 0, in seconds) belongs to: bucket i holds
// (2^((i-1)/8), 2^(i/8)].
func nativeIndex(v float64) int {
	frac, exp := math.Frexp(v)
	return sort.SearchFloat64s(nativeBounds, frac) + (exp-1)*len(nativeBounds)
}

// latency is one series' cumulative acquire latency distribution.
type latency struct {
	created time.Time
	count   uint64
	sumS    float64
	classic []uint64 // per classicBoundsS, not cumulative; the +Inf bucket is count
	native  map[int]int64
	zero    uint64
}

func newLatency() *latency {
	return &latency{created: time.Now(), classic: make([]uint64, len(classicBoundsS)), native: map[int]int64{}}
}

// add adds the values of h, an HDR histogram in µs. Each HDR bucket counts as its highest
// equivalent value, as HDR's own percentiles do; the sum uses HDR's mean.
func (l *latency) add(h *hdrhistogram.Histogram) {
	if h == nil || h.TotalCount() == 0 {
		return
	}
	n := h.TotalCount()
	l.count += uint64(n)
	l.sumS += h.Mean() * float64(n) / 1e6
	for _, bar := range h.Distribution() {
		if bar.Count == 0 {
			continue
		}
		c := uint64(bar.Count)
		v := float64(bar.To) / 1e6
		if i, _ := slices.BinarySearch(classicBoundsS, v); i < len(l.classic) {
			l.classic[i] += c
		}
		if v <= nativeZeroThresholdS {
			l.zero += c
			continue
		}
		l.native[nativeIndex(v)] += int64(c)
	}
}

// metric is the series as Prometheus sees it at a scrape: a copy, so that the next second
// can go on adding.
func (l *latency) metric(desc *prometheus.Desc, labelValues []string) prometheus.Metric {
	h := &dto.Histogram{
		SampleCount:      new(l.count),
		SampleSum:        new(l.sumS),
		CreatedTimestamp: timestamppb.New(l.created),
		Schema:           new(int32(nativeSchema)),
		ZeroThreshold:    new(float64(nativeZeroThresholdS)),
		ZeroCount:        new(l.zero),
	}
	var cum uint64
	for i, b := range classicBoundsS {
		cum += l.classic[i]
		h.Bucket = append(h.Bucket, &dto.Bucket{CumulativeCount: new(cum), UpperBound: new(b)})
	}
	h.PositiveSpan, h.PositiveDelta = spans(l.native)
	if len(h.PositiveSpan) == 0 {
		// A native histogram without buckets still needs a span to be told from a classic one.
		h.PositiveSpan = []*dto.BucketSpan{{Offset: new(int32(0)), Length: new(uint32(0))}}
	}
	return &histogramMetric{desc: desc, h: h, labels: prometheus.MakeLabelPairs(desc, labelValues)}
}

// spans encodes native buckets as Prometheus sends them: runs of consecutive indexes, each
// run after a gap (offset) from the last, and every count as the difference from the one
// before it.
func spans(buckets map[int]int64) ([]*dto.BucketSpan, []int64) {
	keys := make([]int, 0, len(buckets))
	for k, c := range buckets {
		if c != 0 {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var out []*dto.BucketSpan
	var deltas []int64
	var prevCount int64
	for i, k := range keys {
		switch {
		case i == 0:
			out = append(out, &dto.BucketSpan{Offset: new(int32(k)), Length: new(uint32(0))})
		case k != keys[i-1]+1:
			out = append(out, &dto.BucketSpan{Offset: new(int32(k - keys[i-1] - 1)), Length: new(uint32(0))})
		}
		*out[len(out)-1].Length++
		deltas = append(deltas, buckets[k]-prevCount)
		prevCount = buckets[k]
	}
	return out, deltas
}

// histogramMetric is a histogram series frozen at a scrape.
type histogramMetric struct {
	desc   *prometheus.Desc
	h      *dto.Histogram
	labels []*dto.LabelPair
}

func (m *histogramMetric) Desc() *prometheus.Desc { return m.desc }

func (m *histogramMetric) Write(out *dto.Metric) error {
	out.Histogram, out.Label = m.h, m.labels
	return nil
}
