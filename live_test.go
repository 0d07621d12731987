package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/live"
	"github.com/lockbench/lockbench/internal/node"
	"github.com/lockbench/lockbench/internal/redistest"
	"github.com/lockbench/lockbench/report"
)

// syncBuffer is a bytes.Buffer a running command writes to while the test reads it, and
// waits on (awaitLine): the lines a command prints are the events a test waits for.
type syncBuffer struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	wrote  chan struct{} // a token after each write, for awaitLine
	closed bool
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	n, err := b.buf.Write(p)
	wrote := b.signal()
	b.mu.Unlock()
	select {
	case wrote <- struct{}{}:
	default: // a token is waiting already
	}
	return n, err
}

// signal returns the channel a write or Close sends its token to; b.mu is held.
func (b *syncBuffer) signal() chan struct{} {
	if b.wrote == nil {
		b.wrote = make(chan struct{}, 1)
	}
	return b.wrote
}

// Close says the writer is done (its process ended): awaitLine stops waiting for more.
func (b *syncBuffer) Close() {
	b.mu.Lock()
	b.closed = true
	wrote := b.signal()
	b.mu.Unlock()
	select {
	case wrote <- struct{}{}:
	default:
	}
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// awaitLine waits for a complete line that match accepts and returns it; false when the
// writer closed or within passed first. within is a generous bound for a stuck process,
// not a measure of anything.
func (b *syncBuffer) awaitLine(within time.Duration, match func(line string) bool) (string, bool) {
	giveUp := time.NewTimer(within)
	defer giveUp.Stop()
	seen := 0 // bytes of complete lines already tried
	for {
		b.mu.Lock()
		text, closed, wrote := b.buf.String(), b.closed, b.signal()
		b.mu.Unlock()
		for {
			i := strings.IndexByte(text[seen:], '\n')
			if i < 0 {
				break
			}
			line := text[seen : seen+i]
			seen += i + 1
			if match(line) {
				return line, true
			}
		}
		if closed {
			return "", false
		}
		select {
		case <-wrote:
		case <-giveUp.C:
			return "", false
		}
	}
}

// counterValue finds `name{...strategy="s"...} v` in a text exposition; -1 when absent.
func counterValue(exposition, name, strategy string) float64 {
	re := regexp.MustCompile(`(?m)^` + name + `\{[^}]*strategy="` + regexp.QuoteMeta(strategy) + `"[^}]*\} (\S+)$`)
	m := re.FindStringSubmatch(exposition)
	if m == nil {
		return -1
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	return v
}

// During a real run against a real redis-server, /metrics shows the running strategy's
// series, acquisitions and Redis commands counting up.
func TestE2EMetricsEndpointDuringARun(t *testing.T) {
	t.Parallel()
	redistest.Require(t)
	srv, _ := redistest.Server(t)
	out := filepath.Join(t.TempDir(), "r.json")
	var stdout, stderr syncBuffer
	done := make(chan int)
	go func() {
		// At a rate: the series count up as well, and four workers looping on one key took
		// the cores for the run's 6 s.
		done <- run([]string{"run", "--redis", srv.Addr, "--strategy", "token", "--workers", "4", "--rate", "200", "--duration", "6s", "--warmup", "0",
			"--metrics-addr", "127.0.0.1:0", "--quiet", "--format", "json", "--out", out}, &stdout, &stderr)
	}()
	addrRE := regexp.MustCompile(`metrics at (http://\S+/metrics)`)
	var url string
	var exposition string
	deadline := time.After(30 * time.Second)
	for seen := false; !seen; {
		select {
		case code := <-done:
			t.Fatalf("the run ended (exit %d) before /metrics showed its series; stderr: %s\nlast scrape:\n%s", code, stderr.String(), exposition)
		case <-deadline:
			t.Fatalf("no series in 30s; stderr: %s\nlast scrape:\n%s", stderr.String(), exposition)
		case <-time.After(200 * time.Millisecond):
		}
		if url == "" {
			m := addrRE.FindStringSubmatch(stderr.String())
			if m == nil {
				continue
			}
			url = m[1]
		}
		resp, err := http.Get(url)
		if err != nil {
			continue
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		exposition = string(body)
		seen = counterValue(exposition, "lockbench_acquires_total", "token") > 0 &&
			counterValue(exposition, "lockbench_redis_commands_total", "token") > 0 &&
			counterValue(exposition, "lockbench_acquire_latency_seconds_count", "token") > 0
	}
	for _, name := range []string{"lockbench_timeouts_total", "lockbench_overlaps_total", "lockbench_errors_total", "lockbench_renewals_total", "lockbench_running"} {
		if counterValue(exposition, name, "token") < 0 {
			t.Errorf("no %s for token during the run:\n%s", name, exposition)
		}
	}
	if v := counterValue(exposition, "lockbench_running", "token"); v != 1 {
		t.Errorf("lockbench_running = %v during the run, want 1", v)
	}
	if code := <-done; code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	// The endpoint goes with the run.
	if resp, err := http.Get(url); err == nil {
		resp.Body.Close()
		t.Errorf("%s still answers after the run", url)
	}
}

// --live - streams one NDJSON line per strategy per second on stdout and nothing else (the
// table goes to stderr); the lines add up to the report's totals.
func TestE2ELiveNDJSONOnStdout(t *testing.T) {
	t.Parallel()
	redistest.Require(t)
	srv, _ := redistest.Server(t)
	code, stdout, stderr := cli("run", "--redis", srv.Addr, "--strategy", "token,fenced", "--workers", "4", "--rate", "200",
		"--duration", "2s", "--warmup", "500ms", "--live", "-", "--quiet")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "STRATEGY") {
		t.Errorf("with --live - and no --out, the table should go to stderr:\n%s", stderr)
	}
	lines := map[string][]live.Line{}
	for _, raw := range strings.Split(strings.TrimSuffix(stdout, "\n"), "\n") {
		var l live.Line
		dec := json.NewDecoder(strings.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&l); err != nil {
			t.Fatalf("stdout line %q is not a --live object: %v\nstdout:\n%s", raw, err, stdout)
		}
		lines[l.Strategy] = append(lines[l.Strategy], l)
	}
	for i, s := range []string{"token", "fenced"} {
		// One a second, of the second just past: a busy machine may fold two seconds into
		// one line (its interval_s says so), so the count of lines proves nothing; that
		// they add up to the report is TestE2ELiveFileAddsUpToTheReport's.
		ls := lines[s]
		if len(ls) == 0 {
			t.Errorf("%s: no line for a 2 s window, want one per second", s)
			continue
		}
		for j, l := range ls {
			if l.Phase != i+1 || l.TS <= 0 || (j > 0 && l.TS <= ls[j-1].TS) || l.Time == "" {
				t.Errorf("%s line %d: %+v", s, j, l)
			}
			if l.Acquires > 0 && (l.P50US <= 0 || l.P99US < l.P50US) {
				t.Errorf("%s line %d: p50 %d µs, p99 %d µs", s, j, l.P50US, l.P99US)
			}
		}
	}
	if t.Failed() {
		t.Logf("stdout:\n%s", stdout)
	}
}

// --live FILE gets the same lines, summing to the report's acquisitions, timeouts and
// overlaps; the report stays on stdout.
func TestE2ELiveFileAddsUpToTheReport(t *testing.T) {
	t.Parallel()
	redistest.Require(t)
	srv, _ := redistest.Server(t)
	path := filepath.Join(t.TempDir(), "live.ndjson")
	code, stdout, stderr := cli("run", "--redis", srv.Addr, "--strategy", "token", "--workers", "4", "--keys", "2", "--rate", "200",
		"--duration", "2s", "--warmup", "0", "--live", path, "--format", "json", "--quiet")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var sum report.Summary
	if err := json.Unmarshal([]byte(stdout), &sum); err != nil || len(sum.Results) != 1 {
		t.Fatalf("the report should stay on stdout: %v\n%s", err, stdout)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var acquires, timeouts, overlaps uint64
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var l live.Line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		acquires, timeouts, overlaps, n = acquires+l.Acquires, timeouts+l.Timeouts, overlaps+l.Overlaps, n+1
	}
	r := sum.Results[0]
	if n == 0 || r.Acquired == 0 || acquires != r.Acquired || timeouts != r.Timeouts || overlaps != r.Safety.Overlaps {
		t.Errorf("%d lines sum to %d acquires, %d timeouts, %d overlaps; the report says %d, %d, %d",
			n, acquires, timeouts, overlaps, r.Acquired, r.Timeouts, r.Safety.Overlaps)
	}
}

func TestLiveAndMetricsFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		code    int
		mention []string
	}{
		{[]string{"run", "--metrics-addr", "9464"}, exitUsage, []string{"--metrics-addr", "HOST:PORT"}},
		{[]string{"run", "--live", "/nonexistent-dir/live.ndjson"}, exitUsage, []string{"--live", "cannot be written"}},
		{[]string{"run", "--node", "auto/3", "--barrier", "b"}, exitUsage, []string{"JOB_COMPLETION_INDEX", "Indexed Job"}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			t.Setenv(node.JobIndexEnv, "")
			code, _, stderr := cli(tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d: %s", code, tc.code, stderr)
			}
			for _, m := range tc.mention {
				if !strings.Contains(stderr, m) {
					t.Errorf("stderr should mention %q: %s", m, stderr)
				}
			}
		})
	}
}
