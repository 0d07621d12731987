package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/redistest"
	"github.com/lockbench/lockbench/strategies"
)

// cli runs lockbench in-process, as main does, and returns exit code, stdout and stderr.
func cli(args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	code := run(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestUsageErrorsExit2NamingTheField(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		mention []string
	}{
		{[]string{"run", "--workers", "abc"}, []string{"--workers", "abc"}},
		{[]string{"run", "--wait", "poll"}, []string{"wait", "spin[:INTERVAL]", "backoff", "pubsub"}},
		{[]string{"run", "--watchdog", "sometimes"}, []string{"watchdog", "auto"}},
		{[]string{"run", "--strategy", "mutex"}, []string{"strategy", "token", "fair"}},
		{[]string{"run", "--format", "xml"}, []string{"format", "json", "table"}},
		{[]string{"run", "--hold", "forever"}, []string{"--hold", "uniform:MIN..MAX", "exp:MEAN"}},
		{[]string{"run", "--key-dist", "zipf:0.5"}, []string{"--key-dist", "S > 1"}},
		{[]string{"run", "--keys", "-3"}, []string{"--keys"}},
		{[]string{"run", "--ttl", "0s"}, []string{"--ttl"}},
		{[]string{"run", "--strategy", "token", "--watchdog", "20s"}, []string{"watchdog", "shorter than the ttl"}},
		{[]string{"run", "--strategy", "set-nx-del", "--watchdog", "auto"}, []string{"watchdog", "cannot renew"}},
		{[]string{"run", "--reentry", "2", "--strategy", "token"}, []string{"--reentry", "reentrant-hash"}},
		{[]string{"run", "--rate", "-5"}, []string{"--rate"}},
		{[]string{"run", "--redis", "nocolon"}, []string{"--redis", "host:port"}},
		{[]string{"run", "stray"}, []string{"unexpected argument"}},
		{[]string{"bench"}, []string{"unknown command", "run"}},
		{[]string{"strategies", "--format", "yaml"}, []string{"--format", "json"}},
		{[]string{"run", "--workers", "0"}, []string{"--workers 0", "at least 1"}},
		{[]string{"run", "--keys", "0"}, []string{"--keys 0", "at least 1"}},
		{[]string{"run", "--duration", "0s"}, []string{"--duration 0s", "at least 100ms"}},
		{[]string{"run", "--acquire-timeout", "0s"}, []string{"--acquire-timeout 0s", "> 0"}},
		{[]string{"run", "--warmup", "-1s"}, []string{"--warmup -1s", "0 = no warm-up"}},
		{[]string{"run", "--strategy", "all,token"}, []string{"--strategy", "'all' runs the articles' Redis strategies"}},
		{[]string{"run", "--fault", "kill:node=0,at=20s", "--duration", "5s"}, []string{"--fault", "at=20s", "outside the measured window"}},
		{[]string{"run", "--strategy", "token,etcd-mutex", "--fault", "failover:at=1s"}, []string{"--fault", "etcd-mutex", "runs on etcd", "kill, redis-pause, partition and latency"}},
		{[]string{"run", "--max-errors", "lots"}, []string{"--max-errors", "percentage"}},
		{[]string{"run", "--out", "/nonexistent-dir/r.json"}, []string{"--out", "cannot be written"}},
		{[]string{"run", "--hdr-dir", "/proc/no-such-dir"}, []string{"--hdr-dir", "cannot be created"}},
		{[]string{"run", "--plot", "/nonexistent-dir/p.png"}, []string{"--plot", "cannot be written"}},
		{[]string{"run", "--wait-replicas", "1", "--duration", "1s"}, []string{"--wait-replicas 1", "0 replica"}},
		{[]string{"capacity", "--slo", "p99=5ms", "--start", "0"}, []string{"--start 0"}},
		{[]string{"run", "--tls-cert", "c.pem"}, []string{"--tls-cert and --tls-key go together"}},
		{[]string{"run", "--tls-ca-cert", "/nonexistent-ca.pem"}, []string{"--tls-ca-cert"}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, _, stderr := cli(tc.args...)
			if code != exitUsage {
				t.Fatalf("exit %d, want %d; stderr: %s", code, exitUsage, stderr)
			}
			for _, m := range tc.mention {
				if !strings.Contains(stderr, m) {
					t.Errorf("stderr should mention %q: %s", m, stderr)
				}
			}
			if strings.Contains(stderr, "goroutine ") || strings.Contains(stderr, "panic") {
				t.Errorf("stack trace on bad input: %s", stderr)
			}
		})
	}
}

func TestHelpAndVersionExit0(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"run", "--help"}, {"strategies", "-h"}, {"version"}, {"--version"}} {
		code, stdout, stderr := cli(args...)
		if code != exitOK || stdout == "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, stdout, stderr)
		}
	}
	if _, stdout, _ := cli("run", "--help"); !strings.Contains(stdout, "--acquire-timeout") {
		t.Errorf("run --help does not list its flags: %s", stdout)
	}
}

func TestUnreachableRedisExits1NamingTheAddress(t *testing.T) {
	start := time.Now()
	code, _, stderr := cli("run", "--redis", "127.0.0.1:1", "--connect-timeout", "1s", "-q")
	if code != exitFailure {
		t.Fatalf("exit %d, want %d; stderr: %s", code, exitFailure, stderr)
	}
	if !strings.Contains(stderr, "127.0.0.1:1") {
		t.Fatalf("stderr does not name the address: %s", stderr)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("took %s with --connect-timeout 1s", took)
	}
}

func TestStrategiesListsTheCatalog(t *testing.T) {
	code, stdout, _ := cli("strategies")
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	names := []string{"getset", "setnx-expire", "setnx-stale", "set-nx-del", "get-del", "token",
		"reentrant-local", "reentrant-hash", "redlock", "fenced", "fair"}
	for _, name := range names {
		if !strings.Contains(stdout, name) {
			t.Errorf("table lacks %s", name)
		}
	}
	code, stdout, _ = cli("strategies", "--format", "json")
	var infos []strategies.Info
	if err := json.Unmarshal([]byte(stdout), &infos); err != nil || code != exitOK || len(infos) != len(strategies.Catalog()) {
		t.Fatalf("json: exit %d, %d entries, %v", code, len(infos), err)
	}
}

// The acceptance run, shortened: three safe strategies, many workers on one key.
// Through the binary: a thousand goroutines under the race detector make most of a busy
// machine's time, and this checks the output, not lockbench's memory accesses.
func TestE2ERunJSONMatchesSchema(t *testing.T) {
	t.Parallel()
	srv, _ := redistest.Server(t)
	s, code, stderr := runBinaryJSON(t, "run", "--redis", srv.Addr, "--strategy", "token,reentrant-hash,fenced",
		"--workers", "1000", "--keys", "1", "--duration", "2s", "--warmup", "0") // the contract: runBinaryJSON checks the schema
	if s == nil {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if len(s.Results) != 3 || s.Target.Mode != "external" || s.Target.RedisVersion == "" {
		t.Fatalf("results %d, target %+v", len(s.Results), s.Target)
	}
	for _, r := range s.Results {
		a := r.LatencyUS.Acquire
		if r.AcquireRate <= 0 || !(a.P50 <= a.P90 && a.P90 <= a.P99 && a.P99 <= a.P999 && a.P999 <= a.Max) {
			t.Errorf("%s: rate %.1f, acquire %+v", r.Strategy, r.AcquireRate, a)
		}
		if r.Safety.Overlaps != 0 {
			t.Errorf("%s: %d overlaps", r.Strategy, r.Safety.Overlaps)
		}
	}
}

func TestE2ERunWritesOutAndHDRFiles(t *testing.T) {
	t.Parallel()
	srv, _ := redistest.Server(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "r.csv")
	code, stdout, stderr := cli("run", "--redis", srv.Addr, "-s", "token", "-w", "10", "--rate", "200", "-d", "1s", "--warmup", "0",
		"--format", "csv", "--out", out, "--hdr-dir", filepath.Join(dir, "hdr"))
	if code != exitOK || stdout != "" {
		t.Fatalf("exit %d, stdout %q, stderr %s", code, stdout, stderr)
	}
	for _, f := range []string{out, filepath.Join(dir, "hdr", "token.hgrm"), filepath.Join(dir, "hdr", "token.hlog")} {
		if st, err := os.Stat(f); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// Ctrl-C: a real process gets SIGINT mid-phase, stops, releases its locks, prints the
// report of what ran marked interrupted, and exits 130.
func TestE2ESIGINTPrintsPartialReport(t *testing.T) {
	t.Parallel()
	srv, c := redistest.Server(t)
	s := interruptMidRun(t, 0, "run", "--redis", srv.Addr, "-s", "token,fenced", "-w", "50",
		"--hold", "20ms", "-d", "1m", "--warmup", "0", "--format", "json")
	if len(s.Results) != 1 || !s.Results[0].Interrupted || s.Results[0].Acquired == 0 {
		t.Fatalf("want an interrupted report of the first phase: %+v", s)
	}
	if n, _ := c.Do(context.Background(), c.B().Dbsize().Build()).AsInt64(); n != 0 {
		t.Fatalf("%d keys left in Redis: held locks were not released", n)
	}
}

func TestHelpPrintsOnce(t *testing.T) {
	for _, cmd := range []string{"run", "sweep", "capacity", "strategies", "profiles", "faults", "target", "version"} {
		_, stdout, _ := cli(cmd, "--help")
		if n := strings.Count(stdout, "Usage: lockbench"); n != 1 {
			t.Errorf("%s --help prints its usage %d times", cmd, n)
		}
	}
}
