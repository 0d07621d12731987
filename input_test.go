package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/redistest"
)

// What a day of use as a new user found accepted, or refused too late (issue "Tried as a
// new user would"): each bad input exits 2 with one line naming the problem, before
// anything runs. --redis points nowhere, so that a check made after connecting would
// fail differently.
func TestBadInputIsRefusedUpFront(t *testing.T) {
	dir := t.TempDir()
	same := filepath.Join(dir, "r.svg")
	for _, tc := range []struct {
		args    []string
		mention string
	}{
		{[]string{"run", "--workers", "2000000000"}, "of memory"},
		{[]string{"run", "--workers", "100000000"}, "of memory"},
		{[]string{"run", "--keys", "2000000000"}, "--keys 2000000000"},
		{[]string{"run", "--rate", "100", "--max-inflight", "2000000000"}, "--max-inflight 2000000000"},
		{[]string{"run", "--memprofile", "/nonexistent/m.prof"}, "--memprofile"},
		{[]string{"run", "--cpuprofile", "/nonexistent/x"}, "--cpuprofile"},
		{[]string{"run", "--strategy", "redsync", "--wait", "pubsub"}, "--wait pubsub for redsync"},
		{[]string{"run", "--strategy", "etcd-mutex", "--wait", "spin", "--watchdog", "auto"}, "for etcd-mutex"},
		{[]string{"run", "--fault", "crash-between:p=0.5"}, "only setnx-expire"},
		{[]string{"run", "--strategy", "etcd-mutex", "--wait-replicas", "1"}, "runs on etcd"},
		{[]string{"run", "-o", same, "--plot", same}, "same file"},
		{[]string{"run", "-o", filepath.Join(dir, "x.json"), "--live", filepath.Join(dir, "x.json")}, "same file"},
		{[]string{"run", "--metrics-addr", "999.1.1.1:99999"}, "--metrics-addr"},
		{[]string{"run", "--strategy", ""}, "--strategy"},
		{[]string{"run", "--strategy", "token,token"}, "listed twice"},
		{[]string{"run", "--duration", "1ns"}, "--duration 1ns"},
		{[]string{"run", "--etcd-members", "2", "--strategy", "etcd-mutex"}, "--etcd-members 2"},
		{[]string{"run", "--max-inflight", "10"}, "open loop"},
		{[]string{"sweep", "--param", "ttl=1s,1s"}, "twice"},
		{[]string{"run", "--rate", "1e12"}, "--rate"},
		{[]string{"run", "--connect-timeout", "-1s"}, "--connect-timeout"},
		{[]string{"run", "--redis", "127.0.0.1:1,,127.0.0.1:2"}, "empty element"},
		{[]string{"run", "--strategy", "etcd-mutex", "--etcd", "127.0.0.1:99999"}, "port 99999"},
		{[]string{"run", "--strategy", "zk-lock", "--zookeeper", "127.0.0.1:99999"}, "port 99999"},
		{[]string{"run", "--ttl", "0"}, "only setnx-expire runs without one"},
		{[]string{"run", "--ttl", "-1s"}, "--ttl -1s"},
		{[]string{"run", "--read-ratio", "0.5"}, "rw-lock"},
		{[]string{"run", "--permits", "3"}, "only a semaphore"},
		{[]string{"run", "--lock-set", "2"}, "multilock"},
		{[]string{"run", "--strategy", "rw-lock", "--read-ratio", "2"}, "--read-ratio 2"},
		{[]string{"run", "--strategy", "semaphore", "--permits", "0"}, "--permits"},
		{[]string{"run", "--strategy", "multilock", "--lock-set", "3"}, "at most --keys"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			args := tc.args
			if !strings.Contains(strings.Join(args, " "), "--redis") {
				args = append(args, "--redis", "127.0.0.1:1")
			}
			code, _, stderr := cli(args...)
			if code != exitUsage || !strings.Contains(stderr, tc.mention) || strings.Count(stderr, "\n") != 1 {
				t.Fatalf("exit %d, stderr %q; want exit 2 and one line mentioning %q", code, stderr, tc.mention)
			}
			if strings.Contains(stderr, "goroutine ") || strings.Contains(stderr, "panic") {
				t.Errorf("stack trace on bad input: %s", stderr)
			}
		})
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("refused runs left files behind: %v", entries)
	}
}

// --wait with 'all' is not refused for the strategy of 'all' that waits its own way
// (spin-lock): the run goes on to connect (and fails there, nothing listening).
func TestWaitWithAllIsAccepted(t *testing.T) {
	code, _, stderr := cli("run", "--strategy", "all", "--wait", "pubsub", "--redis", "127.0.0.1:1", "--connect-timeout", "1s")
	if code != exitFailure || !strings.Contains(stderr, "cannot reach Redis") {
		t.Errorf("exit %d, %q; want the run to pass the checks and fail to connect (exit 1)", code, stderr)
	}
}

// Inputs that are files: a directory or another JSON is the user's mistake (exit 2), said
// in words, not as a Go type.
func TestReportInputErrorsExit2(t *testing.T) {
	dir := t.TempDir()
	other := filepath.Join(dir, "other.json")
	if err := os.WriteFile(other, []byte(`{"tool":"lockbench","results":"x"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"report", "plot", dir, "-o", filepath.Join(dir, "p.png")},
		{"report", "compare", other, other},
	} {
		code, _, stderr := cli(args...)
		if code != exitUsage || strings.Contains(stderr, "report.") || strings.Contains(stderr, "Go struct") {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 in words", args, code, stderr)
		}
	}
}

// An ACL user without rights on lockbench's keys gets NOPERM on every command: the run
// measured nothing and exits 1, naming the missing permission.
func TestE2ENoPermissionExitsNonZero(t *testing.T) {
	t.Parallel()
	redistest.Require(t)
	srv, c := redistest.Server(t)
	if err := c.Do(context.Background(), c.B().AclSetuser().Username("limited").Rule("on", ">pw", "~other:*", "+@all").Build()).Error(); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := cli("run", "--redis", srv.Addr, "--user", "limited", "--password", "pw", "--duration", "300ms", "--warmup", "0s", "-q")
	if code != exitFailure || !strings.Contains(stderr, "NOPERM") || !strings.Contains(stderr, "~lockbench:*") {
		t.Fatalf("exit %d, stderr %q; want exit 1 naming NOPERM and the keys it needs", code, stderr)
	}
}

func TestHelpCommandPrintsTheCommandsHelp(t *testing.T) {
	code, stdout, _ := cli("help", "run")
	if code != exitOK || !strings.HasPrefix(stdout, "Usage: lockbench run") {
		t.Errorf("lockbench help run: exit %d, %q...; want run's usage", code, stdout[:min(len(stdout), 60)])
	}
}

// A second Ctrl-C quits at once, even with the server frozen and even when the process
// was started with SIGINT ignored (the background of a script), where the default action
// would ignore it again.
func TestE2ESecondInterruptQuitsAtOnce(t *testing.T) {
	t.Parallel()
	redistest.Require(t)
	srv, _ := redistest.Server(t)
	p := startCommand(t, exec.Command("sh", "-c", `trap "" INT; exec "$0" "$@"`, binary(t), "run", "--redis", srv.Addr,
		"--workers", "4", "--duration", "1h", "--warmup", "0s", "--acquire-timeout", "1h", "--live", "-", "-q"))
	p.awaitLive(t) // the measured window has begun
	if err := srv.Pause(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = srv.Resume() }()
	// Interrupt until it is gone (two signals sent at once may merge into one).
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	giveUp := time.After(2 * time.Minute)
	for {
		_ = p.cmd.Process.Signal(syscall.SIGINT)
		select {
		case <-p.exited:
			if exitStatus(p.err) != exitInterrupted || !strings.Contains(p.stderr.String(), "quitting at once") {
				t.Errorf("exit %v, stderr %q; want 130 and the word that it quits at once", p.err, p.stderr.String())
			}
			return
		case <-giveUp:
			t.Fatalf("still running 2 minutes after the first interrupt; stderr: %s", p.stderr.String())
		case <-tick.C:
		}
	}
}

// --html writes the self-contained report beside the table, and report html renders a
// result file and the JSON of report compare; nothing in them is fetched from elsewhere.
func TestE2EHTMLReports(t *testing.T) {
	t.Parallel()
	redistest.Require(t)
	srv, _ := redistest.Server(t)
	dir := t.TempDir()
	page, result := filepath.Join(dir, "run.html"), filepath.Join(dir, "run.json")
	code, _, stderr := cli("run", "--redis", srv.Addr, "--strategy", "set-nx-del,token", "--workers", "4",
		"--duration", "300ms", "--warmup", "0s", "--html", page, "-f", "json", "-o", result, "-q")
	if code != exitOK {
		t.Fatalf("run --html: exit %d: %s", code, stderr)
	}
	compared := filepath.Join(dir, "cmp.json")
	code, out, stderr := cli("report", "compare", result, result, "-f", "json")
	if code != exitOK || os.WriteFile(compared, []byte(out), 0o600) != nil {
		t.Fatalf("report compare: exit %d: %s", code, stderr)
	}
	for _, tc := range []struct{ page, want string }{
		{page, "set-nx-del"},
		{filepath.Join(dir, "again.html"), "token"},
		{filepath.Join(dir, "cmp.html"), "token"},
	} {
		if tc.page != page {
			in := result
			if strings.HasSuffix(tc.page, "cmp.html") {
				in = compared
			}
			if code, _, stderr := cli("report", "html", in, "-o", tc.page); code != exitOK {
				t.Fatalf("report html %s: exit %d: %s", in, code, stderr)
			}
		}
		b, err := os.ReadFile(tc.page)
		if err != nil {
			t.Fatal(err)
		}
		doc := string(b)
		if !strings.HasPrefix(strings.ToLower(strings.TrimSpace(doc)), "<!doctype html") || !strings.Contains(doc, tc.want) ||
			strings.Contains(doc, "http://") || strings.Contains(doc, "https://") {
			t.Errorf("%s: want an offline HTML page naming %s (%d bytes)", tc.page, tc.want, len(b))
		}
	}
	if code, _, stderr := cli("report", "html", result); code != exitUsage || !strings.Contains(stderr, "-o FILE") {
		t.Errorf("report html without -o: exit %d, %q; want 2", code, stderr)
	}
}
