package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/proc"
	"github.com/lockbench/lockbench/internal/redistest"
	"github.com/lockbench/lockbench/services/redis"
)

// Messages that misled a new user (issue "Tried as a new user would", item 13), each as it
// reads now.

func TestProfileMessages(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.yaml")
	if err := os.WriteFile(empty, []byte("phases: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := cli("run", "--profile", empty); code != exitUsage || !strings.Contains(stderr, "found an empty list") {
		t.Errorf("phases: []: exit %d, %q; want it to say it found an empty list", code, stderr)
	}
	// profiles show takes a path, as run --profile does, and refuses what run refuses
	// (issue 30, item 17).
	code, stdout, stderr := cli("profiles", "show", empty)
	if code != exitUsage || stdout != "" || !strings.Contains(stderr, "found an empty list") {
		t.Errorf("profiles show %s: exit %d, %q, %q; want exit 2 and run's error", empty, code, stdout, stderr)
	}
	good := filepath.Join(dir, "good.yaml")
	if err := os.WriteFile(good, []byte("workers: 7\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, stdout, stderr := cli("profiles", "show", good); code != exitOK || stdout != "workers: 7\n" {
		t.Errorf("profiles show %s: exit %d, %q, %q; want the file", good, code, stdout, stderr)
	}
	if code, _, stderr := cli("profiles", "show", filepath.Join(dir, "missing.yaml")); code == exitOK || strings.Contains(stderr, "unknown profile") {
		t.Errorf("profiles show of a missing file: exit %d, %q; want the file's error, not 'unknown profile'", code, stderr)
	}
}

// capacity's header names the time each step measures, --step-duration.
func TestE2ECapacityHeaderShowsTheStep(t *testing.T) {
	t.Parallel()
	redistest.Require(t)
	srv, _ := redistest.Server(t)
	code, stdout, stderr := cli("capacity", "--redis", srv.Addr, "--slo", "p99=1s", "--start", "50", "--factor", "100",
		"--step-duration", "300ms", "--warmup", "0s", "--keys", "100", "--workers", "10", "-q")
	if code != exitOK || !strings.Contains(stdout, "300ms measured") {
		t.Errorf("capacity --step-duration 300ms: exit %d, header %q (stderr %q); want '300ms measured'", code, firstLines(stdout, 4), stderr)
	}
}

// --tls-insecure is said in the report: the server was not authenticated.
func TestE2ETLSInsecureIsNoted(t *testing.T) {
	t.Parallel()
	redistest.Require(t)
	ca := redistest.NewCA(t)
	srv := redistest.StartConfig(t, redis.ServerConfig{TLS: &ca.Files})
	s, code, stderr := runJSON(t, "run", "--redis", "rediss://"+srv.Addr, "--tls-insecure", "--duration", "200ms", "--warmup", "0s")
	if s == nil {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(strings.Join(s.Notes, "\n"), "--tls-insecure") {
		t.Errorf("notes %q; want the --tls-insecure run marked", s.Notes)
	}
}

// target up with --state says so in the commands it suggests.
func TestE2ETargetUpHintKeepsState(t *testing.T) {
	t.Parallel()
	redistest.Require(t)
	state := filepath.Join(t.TempDir(), "state.json")
	code, stdout, stderr := cli("target", "up", "--state", state)
	if code != exitOK {
		t.Fatalf("target up: exit %d: %s", code, stderr)
	}
	t.Cleanup(func() { cli("target", "down", "--state", state) })
	if !strings.Contains(stdout, "lockbench target down --state "+state) {
		t.Errorf("target up --state: %q; want the hint to carry --state %s", stdout, state)
	}
}

// --node without its partner says whom it waits for, and how long.
func TestE2ENodeSaysItWaits(t *testing.T) {
	t.Parallel()
	redistest.Require(t)
	srv, _ := redistest.Server(t)
	p := startBinary(t, "run", "--redis", srv.Addr, "--node", "1/2", "--barrier", "alone", "-d", "1s", "-q")
	if _, ok := p.stderr.awaitLine(2*time.Minute, func(l string) bool {
		return strings.Contains(l, "all 2 processes") && strings.Contains(l, `"alone"`) && strings.Contains(l, "waiting up to 5m0s")
	}); !ok {
		t.Fatalf("no word that node 1/2 waits for its partner (exit %v): %s", p.err, p.stderr.String())
	}
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	return strings.Join(lines[:min(n, len(lines))], "\n")
}

// A server that requires client certificates, reached without one: the message says what it
// may want, instead of asking whether this is a TLS port.
func TestE2EMutualTLSWithoutClientCertificate(t *testing.T) {
	t.Parallel()
	redistest.Require(t)
	ca := redistest.NewCA(t)
	port, err := proc.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	srv := startCommand(t, exec.Command("redis-server", "--port", "0", "--bind", "127.0.0.1", "--tls-port", strconv.Itoa(port),
		"--tls-cert-file", ca.Files.CertFile, "--tls-key-file", ca.Files.KeyFile, "--tls-ca-cert-file", ca.Files.CAFile,
		"--tls-auth-clients", "yes", "--save", "", "--appendonly", "no"))
	// Ready once it says so (a handshake without a certificate is what we test).
	if _, ok := srv.stdout.awaitLine(2*time.Minute, func(l string) bool { return strings.Contains(l, "Ready to accept connections") }); !ok {
		t.Fatalf("redis-server with TLS never became ready (%v): %s%s", srv.err, srv.stdout.String(), srv.stderr.String())
	}
	code, _, stderr := cli("run", "--redis", "rediss://"+addr, "--tls-ca-cert", ca.Files.CAFile, "--duration", "200ms", "--connect-timeout", "5s")
	if code == exitOK || !strings.Contains(stderr, "client certificate") || strings.Contains(stderr, "is this a TLS port?") {
		t.Errorf("exit %d, %q; want an error saying the server may require a client certificate (--tls-cert, --tls-key)", code, stderr)
	}
}

// --connect-timeout bounds reaching a ZooKeeper the user named, as it bounds Redis: a closed
// port with a timeout of 300ms gives up well before the client's own 10 s.
func TestServiceConnectTimeout(t *testing.T) {
	requireServices(t)
	port, err := proc.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	code, _, stderr := cli("run", "--strategy", "zk-lock", "--zookeeper", "127.0.0.1:"+strconv.Itoa(port), "--connect-timeout", "300ms")
	took := time.Since(start)
	if code != exitFailure || !strings.Contains(stderr, "--zookeeper") {
		t.Fatalf("exit %d, %q; want exit 1 naming --zookeeper", code, stderr)
	}
	if took > 8*time.Second {
		t.Errorf("gave up after %s with --connect-timeout 300ms; the client's own timeout is 10s", took.Round(time.Millisecond))
	}
}
