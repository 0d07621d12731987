package live

import (
	"io"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/workload"
)

// second builds a measured progress report whose interval holds the given acquire
// latencies (µs).
func second(strategy string, phase int, label string, latenciesUS ...int64) workload.Progress {
	h := report.NewHistogram()
	for _, v := range latenciesUS {
		_ = h.RecordValue(v)
	}
	return workload.Progress{
		Phase: phase, Phases: 2, Strategy: strategy, Label: label, Elapsed: time.Second, Total: 10 * time.Second,
		Second: workload.ProgressSecond{
			Duration: time.Second, Acquired: uint64(len(latenciesUS)), Timeouts: 2, Errors: 1, Overlaps: 3, Renewals: 4,
			P50US: h.ValueAtQuantile(50), P99US: h.ValueAtQuantile(99), Latency: h,
		},
	}
}

// scrape fetches the endpoint in the Prometheus text format and parses it.
func scrape(t *testing.T, addr string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %s", resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("the exposition does not parse: %v", err)
	}
	return fams
}

// find returns the series of fam with the given strategy and phase.
func find(t *testing.T, fams map[string]*dto.MetricFamily, name, strategy, phase string) *dto.Metric {
	t.Helper()
	fam, ok := fams[name]
	if !ok {
		t.Fatalf("no %s in the exposition", name)
	}
	for _, m := range fam.GetMetric() {
		got := map[string]string{}
		for _, l := range m.GetLabel() {
			got[l.GetName()] = l.GetValue()
		}
		if got["strategy"] == strategy && got["phase"] == phase {
			return m
		}
	}
	t.Fatalf("no %s{strategy=%q,phase=%q}", name, strategy, phase)
	return nil
}

func TestMetricsCountTheMeasuredSeconds(t *testing.T) {
	m, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()

	// The warm-up creates the phase's series at 0 and marks it running.
	m.Observe(workload.Progress{Phase: 1, Phases: 2, Strategy: "token", Warmup: true, Elapsed: time.Second})
	m.AddRedisCommands(1000) // not measured yet: dropped
	fams := scrape(t, m.Addr())
	if v := find(t, fams, "lockbench_acquires_total", "token", "1").GetCounter().GetValue(); v != 0 {
		t.Errorf("acquires in the warm-up = %v, want 0", v)
	}
	if v := find(t, fams, "lockbench_running", "token", "1").GetGauge().GetValue(); v != 1 {
		t.Errorf("running = %v, want 1", v)
	}
	if v := find(t, fams, "lockbench_redis_commands_total", "token", "1").GetCounter().GetValue(); v != 0 {
		t.Errorf("redis commands in the warm-up = %v, want 0", v)
	}

	// Two measured seconds: 0 µs (the zero bucket), 100 µs ×10, 3 ms ×5, 2 s.
	m.Observe(second("token", 1, "", 0, 100, 100, 100, 100, 100))
	m.Observe(second("token", 1, "", 100, 100, 100, 100, 100, 3000, 3000, 3000, 3000, 3000, 2_000_000))
	m.AddRedisCommands(400)
	fams = scrape(t, m.Addr())
	for name, want := range map[string]float64{
		"lockbench_acquires_total": 17, "lockbench_timeouts_total": 4, "lockbench_errors_total": 2,
		"lockbench_overlaps_total": 6, "lockbench_renewals_total": 8, "lockbench_redis_commands_total": 400,
	} {
		if v := find(t, fams, name, "token", "1").GetCounter().GetValue(); v != want {
			t.Errorf("%s = %v, want %v", name, v, want)
		}
	}
	h := find(t, fams, "lockbench_acquire_latency_seconds", "token", "1").GetHistogram()
	if h.GetSampleCount() != 17 {
		t.Errorf("latency count = %d, want 17", h.GetSampleCount())
	}
	if want := (10*100e-6 + 5*3e-3 + 2); math.Abs(h.GetSampleSum()-want) > want*0.01 {
		t.Errorf("latency sum = %v s, want %v s within 1%%", h.GetSampleSum(), want)
	}
	cum := map[float64]uint64{}
	for _, b := range h.GetBucket() {
		cum[b.GetUpperBound()] = b.GetCumulativeCount()
	}
	for le, want := range map[float64]uint64{0.00005: 1, 0.0001: 11, 0.0025: 11, 0.005: 16, 1: 16, 2.5: 17} {
		if cum[le] != want {
			t.Errorf("bucket le=%v holds %d, want %d (all: %v)", le, cum[le], want, cum)
		}
	}

	// A new phase: the last one stops running and keeps its totals.
	m.Observe(second("fenced", 2, "ttl=1s", 200))
	fams = scrape(t, m.Addr())
	if v := find(t, fams, "lockbench_running", "token", "1").GetGauge().GetValue(); v != 0 {
		t.Errorf("the ended phase still runs: %v", v)
	}
	if v := find(t, fams, "lockbench_acquires_total", "token", "1").GetCounter().GetValue(); v != 17 {
		t.Errorf("the ended phase lost its acquires: %v", v)
	}
	if v := find(t, fams, "lockbench_acquires_total", "fenced", "2").GetCounter().GetValue(); v != 1 {
		t.Errorf("fenced acquires = %v, want 1", v)
	}
	m.Finish()
	m.AddRedisCommands(50) // the run is over: dropped
	fams = scrape(t, m.Addr())
	if v := find(t, fams, "lockbench_running", "fenced", "2").GetGauge().GetValue(); v != 0 {
		t.Errorf("running after Finish = %v, want 0", v)
	}
	if v := find(t, fams, "lockbench_redis_commands_total", "fenced", "2").GetCounter().GetValue(); v != 0 {
		t.Errorf("commands after Finish = %v, want 0", v)
	}
}

// The native buckets are client_golang's own: the same values observed by a real
// prometheus.Histogram of the same schema land in the same buckets.
func TestNativeBucketsMatchClientGolang(t *testing.T) {
	valuesUS := []int64{0, 1, 7, 85, 100, 101, 999, 1000, 1024, 3000, 65_536, 2_000_000, 3_600_000_000}
	m := New()
	m.Observe(second("token", 1, "", valuesUS...))
	ref := prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "ref", NativeHistogramBucketFactor: math.Exp2(math.Exp2(-nativeSchema)), NativeHistogramZeroThreshold: nativeZeroThresholdS,
	})
	// Observe what the export counts each value as: its HDR bucket's highest equivalent.
	h := report.NewHistogram()
	for _, v := range valuesUS {
		_ = h.RecordValue(v)
	}
	for _, bar := range h.Distribution() {
		for range bar.Count {
			ref.Observe(float64(bar.To) / 1e6)
		}
	}
	var want dto.Metric
	if err := ref.Write(&want); err != nil {
		t.Fatal(err)
	}
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	var got *dto.Histogram
	for _, f := range fams {
		if f.GetName() == "lockbench_acquire_latency_seconds" {
			got = f.GetMetric()[0].GetHistogram()
		}
	}
	if got == nil {
		t.Fatal("no latency histogram gathered")
	}
	if got.GetSchema() != want.GetHistogram().GetSchema() {
		t.Fatalf("schema %d, client_golang chose %d", got.GetSchema(), want.GetHistogram().GetSchema())
	}
	if g, w := expand(got), expand(want.GetHistogram()); !equalMaps(g, w) {
		t.Errorf("native buckets\n got %v\nwant %v", g, w)
	}
	if got.GetZeroCount() != want.GetHistogram().GetZeroCount() || got.GetZeroCount() != 1 {
		t.Errorf("zero bucket %d, client_golang %d, want 1", got.GetZeroCount(), want.GetHistogram().GetZeroCount())
	}
}

// expand decodes native spans and deltas into index -> count.
func expand(h *dto.Histogram) map[int]int64 {
	out := map[int]int64{}
	idx, i := 0, 0
	var count int64
	for si, s := range h.GetPositiveSpan() {
		if si == 0 {
			idx = int(s.GetOffset())
		} else {
			idx += int(s.GetOffset())
		}
		for range s.GetLength() {
			count += h.GetPositiveDelta()[i]
			if count != 0 {
				out[idx] = count
			}
			i++
			idx++
		}
	}
	return out
}

func equalMaps(a, b map[int]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// OpenMetrics is served when the scraper asks for it, and ends with # EOF.
func TestOpenMetricsNegotiated(t *testing.T) {
	m, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	m.Observe(second("token", 1, "", 100))
	req, _ := http.NewRequest(http.MethodGet, "http://"+m.Addr()+"/metrics", nil)
	req.Header.Set("Accept", "application/openmetrics-text;version=1.0.0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/openmetrics-text") {
		t.Errorf("Content-Type %q, want OpenMetrics", ct)
	}
	for _, want := range []string{`lockbench_acquires_total{label="",phase="1",strategy="token"}`, "lockbench_acquire_latency_seconds_bucket{", "# EOF"} {
		if !strings.Contains(string(body), want) {
			t.Errorf("OpenMetrics exposition lacks %q:\n%s", want, body)
		}
	}
}

func TestListenRefusesABusyPort(t *testing.T) {
	m, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if m2, err := Listen(m.Addr()); err == nil {
		m2.Close()
		t.Fatalf("a second endpoint on %s: no error", m.Addr())
	}
}
