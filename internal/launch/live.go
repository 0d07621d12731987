package launch

// The live exports of a load command (run, sweep, capacity): --metrics-addr serves
// Prometheus/OpenMetrics series while it runs, --live streams one NDJSON line per strategy
// per second. Both are fed by the engine's once-a-second progress report (progressLine
// fans it out); package live does the work.

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/rueidis"

	"github.com/lockbench/lockbench/internal/live"
	"github.com/lockbench/lockbench/internal/output"
	"github.com/lockbench/lockbench/internal/usage"
	"github.com/lockbench/lockbench/services/redis"
	"github.com/lockbench/lockbench/session"
)

// Live are the live-export flags of every load command.
type Live struct {
	MetricsAddr string // --metrics-addr HOST:PORT
	File        string // --live FILE, or - for stdout
}

// Check validates the flags' syntax before anything runs.
func (f *Live) Check() error {
	if f.MetricsAddr != "" {
		host, port, err := net.SplitHostPort(f.MetricsAddr)
		n, perr := strconv.Atoi(port)
		switch {
		case err != nil || port == "":
			return usage.Errorf("invalid --metrics-addr %q: want HOST:PORT, e.g. :9464, 0.0.0.0:9464 or 127.0.0.1:0", f.MetricsAddr)
		case perr != nil || n < 0 || n > 65535:
			return usage.Errorf("invalid --metrics-addr %q: the port must be a number from 0 to 65535 (0 picks a free one)", f.MetricsAddr)
		case host != "" && net.ParseIP(host) == nil && !validHostname(host):
			return usage.Errorf("invalid --metrics-addr %q: %q is neither an IP address nor a host name", f.MetricsAddr, host)
		case strings.Count(host, ".") == 3 && net.ParseIP(host) == nil && strings.Trim(host, "0123456789.") == "":
			return usage.Errorf("invalid --metrics-addr %q: %q is not an IPv4 address (each part 0 to 255)", f.MetricsAddr, host)
		}
	}
	return nil
}

// reportWriter is where the report goes when --out is not given: stdout, unless --live -
// has it, in which case stderr, so that stdout carries nothing but NDJSON
// (lockbench run --live - | jq) and the human still sees the table.
func (f *Live) reportWriter(out string, stdout, stderr io.Writer) io.Writer {
	if f.File == "-" && out == "" {
		return stderr
	}
	return stdout
}

// exports are the exports a launch runs. The zero value (no flags) does nothing.
type exports struct {
	metrics *live.Metrics
	lines   *live.Lines
	file    *os.File // --live FILE; nil for stdout
	stderr  io.Writer

	stopSampling func()
	once         sync.Once
}

// start opens the exports the flags ask for and hooks them to the progress reports. It
// runs before the target is connected, so that a busy port or an unwritable file fails at
// once.
func (f *Live) start(stdout, stderr io.Writer, progress *Line) (*exports, error) {
	if err := f.Check(); err != nil {
		return nil, err
	}
	e := &exports{stderr: stderr, stopSampling: func() {}}
	switch f.File {
	case "":
	case "-":
		e.lines = live.NewLines(stdout)
	default:
		file, err := os.Create(f.File)
		if err != nil {
			return nil, usage.Errorf("--live %s: cannot be written: %v", f.File, output.UnwrapPath(err))
		}
		e.file, e.lines = file, live.NewLines(file)
	}
	if f.MetricsAddr != "" {
		m, err := live.Listen(f.MetricsAddr)
		if err != nil {
			e.close()
			return nil, fmt.Errorf("--metrics-addr %s: %w", f.MetricsAddr, err)
		}
		e.metrics = m
		fmt.Fprintf(stderr, "lockbench: metrics at http://%s/metrics\n", m.Addr())
		progress.observe(m.Observe)
	}
	if e.lines != nil {
		progress.observe(e.lines.Observe)
	}
	return e, nil
}

// sampleRedis reads the Redis masters' command counters once a second for
// lockbench_redis_commands_total, outside the measured path (live.SampleRedis). The
// embedded fake has no counters to read.
func (e *exports) sampleRedis(ctx context.Context, s *session.Session) {
	c := s.Redis
	if e.metrics == nil || c == nil || c.Mode == "embedded" || c.Mode == session.NoRedis {
		return
	}
	clients := append([]rueidis.Client{c.Client}, c.Nodes...)
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		live.SampleRedis(ctx, func() []redis.Node { return redis.Nodes(clients...) }, time.Second, e.metrics.AddRedisCommands)
	}()
	e.stopSampling = func() { cancel(); <-done }
}

// finish ends the run's part: the readings stop and no phase runs any more; the endpoint
// keeps serving until close. It says on stderr if the --live stream could not be written.
func (e *exports) finish() {
	e.once.Do(func() {
		e.stopSampling()
		if e.metrics != nil {
			e.metrics.Finish()
		}
		if e.lines != nil {
			if err := e.lines.Err(); err != nil {
				fmt.Fprintf(e.stderr, "lockbench: --live: %v\n", err)
			}
		}
	})
}

// close finishes and releases the endpoint and the file.
func (e *exports) close() {
	e.finish()
	if e.metrics != nil {
		_ = e.metrics.Close()
	}
	if e.file != nil {
		_ = e.file.Close()
	}
}

// validHostname reports whether h is a syntactically valid DNS host name.
func validHostname(h string) bool {
	if len(h) > 253 {
		return false
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, c := range label {
			if !(c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
				return false
			}
		}
	}
	return true
}
