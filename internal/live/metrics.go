// Package live exports a load command while it runs: Prometheus/OpenMetrics series on an
// HTTP endpoint (--metrics-addr) and one NDJSON line per strategy per second (--live).
//
// Both are fed by the engine's once-a-second workload.Progress report, built from what the
// collector merges anyway: nothing here touches the measured path, and a slow scraper or a
// slow disk costs the workers nothing (the report is delivered on the collector's
// goroutine, so an export must not block; writing a line or adding a second is quick).
package live

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/lockbench/lockbench/workload"
)

// Labels of every series: the strategy, the phase's 1-based number in its run (as the
// progress line shows it), and the phase's label when it has one (a sweep's "ttl=1s", a
// capacity step's "ramp 2k/s", a profile phase's label).
var labelNames = []string{"strategy", "phase", "label"}

// Metrics is the --metrics-addr endpoint: a private registry (never the global one, so no
// other package's metrics leak in and tests can run several) served at /metrics.
//
// The counters count the measured windows only, as the report does: warm-up and drain
// are not in them. A phase's series appear at its first report (warm-up included, at 0)
// and stay after it ends, so that a scrape after the phase still sees its totals.
type Metrics struct {
	reg *prometheus.Registry
	ln  net.Listener
	srv *http.Server

	acquires, timeouts, overlaps, errors, renewals, commands *prometheus.CounterVec
	running                                                  *prometheus.GaugeVec
	latencyDesc                                              *prometheus.Desc

	mu       sync.Mutex
	latency  map[series]*latency
	order    []series // first seen first, for a stable exposition
	last     series   // the phase of the last report
	measured time.Time
	seen     bool
}

type series struct{ strategy, phase, label string }

func (s series) values() []string { return []string{s.strategy, s.phase, s.label} }

// Listen serves the metrics on addr (host:port; port 0 picks a free one, see Addr) until
// Close. It fails at once when addr cannot be listened on.
func Listen(addr string) (*Metrics, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	m := New()
	mux := http.NewServeMux()
	mux.Handle("/metrics", m.Handler())
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprintln(w, "lockbench: metrics at /metrics")
	})
	m.ln = ln
	m.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = m.srv.Serve(ln) }()
	return m, nil
}

// New returns the metrics without an endpoint: serve Handler yourself.
func New() *Metrics {
	counter := func(name, help string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labelNames)
	}
	m := &Metrics{
		reg:      prometheus.NewRegistry(),
		acquires: counter("lockbench_acquires_total", "Locks acquired in the measured window."),
		timeouts: counter("lockbench_timeouts_total", "Acquires that gave up after --acquire-timeout."),
		overlaps: counter("lockbench_overlaps_total", "Times the oracle saw a second holder inside a critical section (mutual exclusion broken)."),
		errors:   counter("lockbench_errors_total", "Redis or network errors the workers saw."),
		renewals: counter("lockbench_renewals_total", "Successful watchdog lease renewals."),
		commands: counter("lockbench_redis_commands_total", "Commands the Redis masters ran while the phase was measured (INFO total_commands_processed, read once a second; scripts' commands count)."),
		running: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "lockbench_running",
			Help: "1 while the phase runs (warm-up included), 0 once it ended.",
		}, labelNames),
		latencyDesc: prometheus.NewDesc("lockbench_acquire_latency_seconds",
			"Acquire latency (open loop: from the intended start), classic and native buckets.", labelNames, nil),
		latency: map[series]*latency{},
	}
	m.reg.MustRegister(m.acquires, m.timeouts, m.overlaps, m.errors, m.renewals, m.commands, m.running, (*latencyCollector)(m))
	return m
}

// Handler serves the registry in the format the scraper asks for (OpenMetrics or the
// Prometheus text and protobuf formats; native histogram buckets travel in protobuf).
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{EnableOpenMetrics: true})
}

// Registry is the private registry, for tests and for callers that add their own series.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Addr is the address the endpoint listens on, with the port chosen when it was 0.
func (m *Metrics) Addr() string {
	if m.ln == nil {
		return ""
	}
	return m.ln.Addr().String()
}

// Observe adds one progress report. It is called from the engine's collector once a second.
func (m *Metrics) Observe(pr workload.Progress) {
	s := series{strategy: pr.Strategy, phase: strconv.Itoa(pr.Phase), label: pr.Label}
	v := s.values()
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.seen || s != m.last {
		if m.seen {
			m.running.WithLabelValues(m.last.values()...).Set(0)
		}
		m.running.WithLabelValues(v...).Set(1)
		if _, ok := m.latency[s]; !ok {
			m.latency[s] = newLatency()
			m.order = append(m.order, s)
			for _, c := range []*prometheus.CounterVec{m.acquires, m.timeouts, m.overlaps, m.errors, m.renewals, m.commands} {
				c.WithLabelValues(v...) // the series exists from the phase's start, at 0
			}
		}
		m.last, m.seen = s, true
	}
	if pr.Warmup {
		m.measured = time.Time{}
		return
	}
	m.measured = time.Now()
	sec := pr.Second
	m.acquires.WithLabelValues(v...).Add(float64(sec.Acquired))
	m.timeouts.WithLabelValues(v...).Add(float64(sec.Timeouts))
	m.overlaps.WithLabelValues(v...).Add(float64(sec.Overlaps))
	m.errors.WithLabelValues(v...).Add(float64(sec.Errors))
	m.renewals.WithLabelValues(v...).Add(float64(sec.Renewals))
	m.latency[s].add(sec.Latency)
}

// AddRedisCommands adds n commands to the phase being measured: the one whose last report,
// less than two seconds ago, was of its measured window. Commands read while no phase is
// measured (warm-up, cleanup between phases) are dropped, as the report drops them; at a
// window's edges the attribution is as coarse as the once-a-second reading.
func (m *Metrics) AddRedisCommands(n uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.seen || m.measured.IsZero() || time.Since(m.measured) > 2*time.Second {
		return
	}
	m.commands.WithLabelValues(m.last.values()...).Add(float64(n))
}

// Finish marks the run over: no phase runs any more.
func (m *Metrics) Finish() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.seen {
		m.running.WithLabelValues(m.last.values()...).Set(0)
	}
	m.measured = time.Time{}
}

// Close stops the endpoint, waiting a moment for a scrape in flight.
func (m *Metrics) Close() error {
	if m.srv == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := m.srv.Shutdown(ctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return m.srv.Close()
	}
	return nil
}

// latencyCollector collects the acquire latency series of Metrics.
type latencyCollector Metrics

func (c *latencyCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.latencyDesc }

func (c *latencyCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range c.order {
		ch <- c.latency[s].metric(c.latencyDesc, s.values())
	}
}
