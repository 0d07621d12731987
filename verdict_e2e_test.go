package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/redistest"
	"github.com/lockbench/lockbench/report"
)

// No verdict the run cannot support (issue 29): a run the lock server stopped reads
// inconclusive, exits 6 and names in one line what to fix — tried as a new user would, on a
// real server with real ACL users.

// readResult reads the one result of a JSON report file.
func readResult(t *testing.T, path string) report.Result {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var s report.Summary
	if err := json.Unmarshal(b, &s); err != nil || len(s.Results) != 1 {
		t.Fatalf("result file: %v, %d results", err, len(s.Results))
	}
	return s.Results[0]
}

// A user without channel rights, --wait pubsub: the waiters' SUBSCRIBE is refused. Before,
// the refusal was taken for a broken connection and the waiters slept out their timeouts
// unseen: 1 acquire, 0 errors, safe, exit 0.
func TestE2EExitInconclusiveWithoutChannelRights(t *testing.T) {
	t.Parallel()
	redistest.Require(t)
	srv, c := redistest.Server(t)
	if err := c.Do(context.Background(), c.B().AclSetuser().Username("nochan").Rule("on", ">nc", "~lockbench*", "resetchannels", "+@all").Build()).Error(); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "r.json")
	code, _, stderr := cli("run", "--redis", srv.Addr, "--user", "nochan", "--password", "nc", "--wait", "pubsub",
		"--workers", "8", "--duration", "1s", "--warmup", "0s", "-q", "-f", "json", "-o", out)
	r := readResult(t, out)
	// Exit 6; or 1 when no acquire at all got through in the window (a loaded machine), which
	// names the rights lockbench needs too.
	if (code != exitInconclusive && (code != exitFailure || r.Acquired > 0)) || !report.IsInconclusive(r.Verdict) || !strings.Contains(stderr, "&lockbench:*") {
		t.Fatalf("exit %d, verdict %q, stderr %q; want exit %d, inconclusive, the channel right named", code, r.Verdict, stderr, exitInconclusive)
	}
	if r.ErrorsByKind == nil || r.ErrorsByKind.Denied == 0 || r.Wait != "pubsub" {
		t.Errorf("errors_by_kind %+v, wait %q: want the denied SUBSCRIBEs counted, and the row's wait", r.ErrorsByKind, r.Wait)
	}
	if e := r.FirstError(report.ErrorDenied); e == nil || e.Right != "&lockbench:*" {
		t.Errorf("FirstErrors %+v: want a denied one naming &lockbench:*", r.FirstErrors)
	}
	if strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Errorf("stderr is not one line: %q", stderr)
	}
}

// A user without scripting: every release (EVALSHA) is refused, its lock lingers for the
// ttl, and the phase acquires next to nothing. Before: safe (or no data), exit 0.
func TestE2EExitInconclusiveWithoutScripting(t *testing.T) {
	t.Parallel()
	redistest.Require(t)
	srv, c := redistest.Server(t)
	if err := c.Do(context.Background(), c.B().AclSetuser().Username("noscript").Rule("on", ">ns", "~lockbench*", "&*", "+@all", "-@scripting").Build()).Error(); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "r.json")
	code, _, stderr := cli("run", "--redis", srv.Addr, "--user", "noscript", "--password", "ns", "--strategy", "token",
		"--workers", "4", "--duration", "1s", "--warmup", "0s", "-q", "-f", "json", "-o", out)
	r := readResult(t, out)
	if code != exitInconclusive || !strings.Contains(r.Verdict, "+@scripting") || !strings.Contains(stderr, "ACL SETUSER <user> +@scripting") {
		t.Fatalf("exit %d, verdict %q, stderr %q; want exit %d and +@scripting named", code, r.Verdict, stderr, exitInconclusive)
	}
}

// Redis frozen mid-run (SIGSTOP) and never resumed: the row shows the server's silence as
// an error of kind timeout, the verdict is inconclusive, and the run ends by itself.
// Before: 22s, TIMEOUTS 0, no error, safe, exit 0.
func TestE2EExitInconclusiveWhenRedisFreezes(t *testing.T) {
	t.Parallel()
	redistest.Require(t)
	srv, _ := redistest.Server(t)
	out := filepath.Join(t.TempDir(), "r.json")
	p := startCommand(t, exec.Command(binary(t), "run", "--redis", srv.Addr, "--strategy", "token", "--workers", "8",
		"--duration", "2s", "--warmup", "0s", "--connect-timeout", "1s", "--live", "-", "-q", "-f", "json", "-o", out))
	p.awaitLive(t) // a second of the window has been measured
	if err := srv.Pause(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = srv.Resume() }()
	if !p.wait(2 * time.Minute) {
		t.Fatalf("still running 2 minutes after Redis froze; stderr: %s", p.stderr.String())
	}
	r := readResult(t, out)
	if code := exitStatus(p.err); code != exitInconclusive || !report.IsInconclusive(r.Verdict) {
		t.Fatalf("exit %d, verdict %q; want %d, inconclusive", code, r.Verdict, exitInconclusive)
	}
	if r.Errors == 0 || r.ErrorsByKind == nil || r.ErrorsByKind.Timeout+r.ErrorsByKind.Unreachable == 0 {
		t.Errorf("errors %d by kind %+v: want the frozen server in the row", r.Errors, r.ErrorsByKind)
	}
	if !strings.Contains(p.stderr.String(), "stopped answering") {
		t.Errorf("stderr %q: want the silent server named", p.stderr.String())
	}
}
