//go:build unix

package main

// Issue 30's inputs that package main answers: refusals in the user's words, reports that
// survive a failed write or a second signal, a --procs fleet interrupted as a whole, its
// secrets off the children's command lines, its directory swept after a kill -9.

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/live"
	"github.com/lockbench/lockbench/internal/proc"
	"github.com/lockbench/lockbench/internal/redistest"
	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/services/postgres"
)

// Bad input of the items 6, 16, 17 and 18: exit 2, one line, naming the flag, in
// the user's words (never strconv's or time's), before anything runs.
func TestAbuseRefusedInOneLine(t *testing.T) {
	dir := t.TempDir()
	result := filepath.Join(dir, "run.json")
	const content = `{"tool": "lockbench", "kind": "run"}`
	if err := os.WriteFile(result, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(result, link); err != nil {
		t.Fatal(err)
	}
	badProfile := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(badProfile, []byte("workers: abc\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	noState := []string{"--state", filepath.Join(dir, "no-target.json")}
	for _, tc := range []struct {
		args    []string
		mention []string
	}{
		{[]string{"run", "--workers", "abc"}, []string{`invalid --workers "abc": want a whole number (e.g. 100)`}},
		{[]string{"run", "--workers", "1.5"}, []string{`invalid --workers "1.5": want a whole number`}},
		{[]string{"run", "--workers", ""}, []string{`invalid --workers "": want a whole number`}},
		{[]string{"run", "--workers", "99999999999999999999"}, []string{`invalid --workers "99999999999999999999": out of range`}},
		{[]string{"run", "--rate", "0x10"}, []string{`invalid --rate "0x10": want a decimal number`}},
		{[]string{"run", "--duration", "10"}, []string{`invalid --duration "10": want a duration with a unit (e.g. 10s`}},
		{[]string{"run", "--quiet=maybe"}, []string{`invalid --quiet "maybe": want true or false`}},
		{[]string{"report", "compare", "--threshold", "x", result, result}, []string{`invalid --threshold "x": want a decimal number`}},
		{[]string{"run", "--live", "-", "-o", "-"}, []string{"--live - and -o -"}},
		{[]string{"run", "--etcd", "127.0.0.1:2379"}, []string{"--etcd ", "etcd-mutex"}},
		{[]string{"run", "--etcd-members", "3", "--strategy", "token,zk-lock"}, []string{"--etcd-members", "etcd-mutex"}},
		{[]string{"run", "--postgres", "postgres://u:pw@127.0.0.1:1/db"}, []string{"--postgres", "pg-advisory"}},
		{append([]string{"run", "--node", "1/2", "--barrier", "b"}, noState...), []string{"--node 1/2", "--redis"}},
		{[]string{"report", "html", result, "-o", result}, []string{"is the input", "report html"}},
		{[]string{"report", "html", result, "-o", link}, []string{"is the input", "report html"}},
		{[]string{"report", "merge", result, result, "--force", "-o", result}, []string{"is the input", "report merge"}},
		{[]string{"report", "plot", result, "-o", "/nonexistent/x.png"}, []string{"/nonexistent/x.png", "cannot be written"}},
		{[]string{"report", "merge", result, "-o", "/nonexistent/x.json"}, []string{"/nonexistent/x.json", "cannot be written"}},
		{[]string{"report", "html", result, "-o", "/nonexistent/x.html"}, []string{"/nonexistent/x.html", "cannot be written"}},
		{[]string{"profiles", "show", badProfile}, []string{badProfile, "workers"}},
	} {
		code, stdout, stderr := cli(tc.args...)
		ok := code == exitUsage && strings.Count(strings.TrimSpace(stderr), "\n") == 0 &&
			!strings.Contains(stderr, "strconv") && !strings.Contains(stderr, "time: ")
		for _, m := range tc.mention {
			ok = ok && strings.Contains(stderr, m)
		}
		if !ok || stdout != "" {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2 and one line naming %q", tc.args, code, stdout, stderr, tc.mention)
		}
	}
	if b, err := os.ReadFile(result); err != nil || string(b) != content {
		t.Errorf("the input was written over: %q, %v", b, err)
	}
}

// A report whose file refuses it (a full disk: /dev/full) is printed on stdout instead, and
// stderr says so (exit 1); one that stdout refuses too goes to a file in $TMPDIR.
func TestAbuseFailedWriteKeepsTheReport(t *testing.T) {
	redistest.Require(t)
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full here")
	}
	code, stdout, stderr := cli("run", "--duration", "100ms", "--warmup", "0s", "--workers", "2", "-q", "-o", "/dev/full")
	if code != exitFailure || !strings.Contains(stdout, "STRATEGY") || !strings.Contains(stderr, "written to stdout instead") {
		t.Fatalf("exit %d, stdout %q, stderr %q; want exit 1, the report on stdout and a line saying so", code, stdout, stderr)
	}

	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	s := &report.Summary{Tool: "lockbench", Kind: report.KindRun}
	write, err := report.Lookup("json")
	if err != nil {
		t.Fatal(err)
	}
	err = writeReport(s, write, "/dev/full", failingWriter{})
	saved, _ := filepath.Glob(filepath.Join(tmp, "lockbench-report-*.json"))
	if err == nil || len(saved) != 1 || !strings.Contains(err.Error(), saved[0]) {
		t.Fatalf("error %v, files %v; want the report saved in $TMPDIR and the error naming it", err, saved)
	}
	if got, err := readSummary(saved[0]); err != nil || got.Tool != "lockbench" {
		t.Errorf("the saved report does not read back: %v", err)
	}
	err = writeHTML("/dev/full", func(w io.Writer) error { _, err := io.WriteString(w, "<html>"); return err })
	saved, _ = filepath.Glob(filepath.Join(tmp, "lockbench-report-*.html"))
	if err == nil || len(saved) != 1 || !strings.Contains(err.Error(), saved[0]) {
		t.Errorf("--html: error %v, files %v; want the HTML saved in $TMPDIR and the error naming it", err, saved)
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, syscall.EIO }

// startInGroup starts the lockbench binary in a process group of its own, as a shell job
// or GNU timeout's child is, writing its JSON report to out and its live lines to stdout.
// The run goes at a rate: what these tests check is how it stops, and its workers looping
// on one key took the cores until it did.
func startInGroup(t *testing.T, env []string, out string, args ...string) *running {
	t.Helper()
	cmd := exec.Command(binary(t), append(args, "--rate", "200", "--live", "-", "-o", out, "-f", "json", "-q")...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Env = append(os.Environ(), env...)
	return startCommand(t, cmd)
}

// interrupted waits for p to end and checks that it exited 130 with a JSON report marked
// interrupted.
func (p *running) interrupted(t *testing.T, out string) *report.Summary {
	t.Helper()
	if !p.wait(2 * time.Minute) {
		t.Fatalf("still running 2 minutes after the signal; stderr: %s", p.stderr.String())
	}
	if exitStatus(p.err) != exitInterrupted {
		t.Fatalf("exit %v, want %d; stderr: %s", p.err, exitInterrupted, p.stderr.String())
	}
	s, err := readSummary(out)
	if err != nil || !s.Interrupted {
		t.Fatalf("want a JSON report with interrupted true: %v %+v; stderr: %s", err, s, p.stderr.String())
	}
	return s
}

// Signals that arrive together are one interruption (GNU timeout signals its child, then
// the child's group); SIGHUP (a closed session) stops a run as SIGTERM does. Each run
// prints its report and exits 130.
func TestE2ESignalsTogetherAreOneAndHUPIsTERM(t *testing.T) {
	t.Parallel()
	redistest.Require(t)
	for _, tc := range []struct {
		name string
		send func(pid int)
	}{
		{"INT to the process, then to its group", func(pid int) {
			_ = syscall.Kill(pid, syscall.SIGINT)
			_ = syscall.Kill(-pid, syscall.SIGINT)
		}},
		{"TERM twice", func(pid int) {
			_ = syscall.Kill(pid, syscall.SIGTERM)
			_ = syscall.Kill(pid, syscall.SIGTERM)
		}},
		{"HUP", func(pid int) { _ = syscall.Kill(pid, syscall.SIGHUP) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			out := filepath.Join(t.TempDir(), "report.json")
			p := startInGroup(t, nil, out, "run", "--workers", "4", "--duration", "1m", "--warmup", "0s")
			p.awaitLive(t)
			tc.send(p.cmd.Process.Pid)
			p.interrupted(t, out)
		})
	}
}

// A --procs run interrupted through its parent, or through the parent's process group as
// a terminal's Ctrl-C is, exits 130 with the merged partial report marked interrupted.
func TestE2EProcsInterruptedExits130(t *testing.T) {
	t.Parallel()
	redistest.Require(t)
	for _, group := range []bool{false, true} {
		t.Run("group="+strconv.FormatBool(group), func(t *testing.T) {
			t.Parallel()
			out := filepath.Join(t.TempDir(), "report.json")
			p := startInGroup(t, nil, out, "run", "--procs", "2", "--workers", "4", "--duration", "1m", "--warmup", "0s")
			p.awaitLive(t)
			pid := p.cmd.Process.Pid
			if group {
				pid = -pid
			}
			_ = syscall.Kill(pid, syscall.SIGINT)
			s := p.interrupted(t, out)
			if len(s.Results) != 1 || s.Results[0].Acquired == 0 {
				t.Errorf("want the merged partial result of the phase: %+v", s.Results)
			}
		})
	}
}

// The secrets a lock service declares go to the children of a --procs fleet through their
// environment: during a run against a PostgreSQL URL with a password, no child's command
// line holds it, and the children reach the server with it.
func TestE2EProcsSecretsStayOffCommandLines(t *testing.T) {
	t.Parallel()
	redistest.Require(t)
	requireServices(t)
	setUp := spawnsServices(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	pg, err := postgres.Spawn(ctx, 20)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pg.Close)
	setUp()
	const secret = "s3cret-Word"
	url := "postgres://postgres:" + secret + "@" + pg.Addr() + "/postgres"
	out := filepath.Join(t.TempDir(), "report.json")
	p := startInGroup(t, nil, out, "run", "--procs", "2", "--strategy", "pg-advisory", "--postgres", url,
		"--workers", "4", "--duration", "1m", "--warmup", "0s")
	p.awaitLive(t)
	kids := 0
	for _, pid := range children(p.cmd.Process.Pid) {
		line, err := proc.CommandLine(pid)
		if err != nil || !strings.Contains(line, "--procs-child") {
			continue
		}
		kids++
		if strings.Contains(line, secret) {
			t.Errorf("child %d's command line holds the password: %s", pid, line)
		}
	}
	if kids != 2 {
		t.Errorf("found %d children of the fleet, want 2", kids)
	}
	// The window can begin before the children's first lock: each opens its PostgreSQL pool
	// on its first acquires, and a busy machine once took longer than the second this test
	// gave it (1.1s, nothing acquired). Interrupt once a second of the stream has acquires.
	if _, ok := p.stdout.awaitLine(2*time.Minute, func(raw string) bool {
		var l live.Line
		return json.Unmarshal([]byte(raw), &l) == nil && l.Acquires > 0
	}); !ok {
		t.Fatalf("no second of the run acquired on PostgreSQL; stderr: %s", p.stderr.String())
	}
	_ = syscall.Kill(p.cmd.Process.Pid, syscall.SIGINT)
	s := p.interrupted(t, out)
	if len(s.Results) != 1 || s.Results[0].Acquired == 0 {
		t.Errorf("the children did not lock on PostgreSQL: %+v", s.Results)
	}
}

// kill -9 of a --procs parent leaves its result directory, lockbench-procs-*, behind: the
// next run removes it, as it removes a killed run's server directories.
func TestE2EProcsDirOfAKilledParentIsSwept(t *testing.T) {
	t.Parallel()
	redistest.Require(t)
	tmp := t.TempDir()
	env := []string{"TMPDIR=" + tmp}
	p := startInGroup(t, env, filepath.Join(t.TempDir(), "report.json"),
		"run", "--procs", "2", "--workers", "4", "--duration", "1m", "--warmup", "0s")
	p.awaitLive(t)
	kids := children(p.cmd.Process.Pid)
	dirs, _ := filepath.Glob(filepath.Join(tmp, "lockbench-procs-*"))
	if len(dirs) != 1 {
		t.Fatalf("want the fleet's directory in $TMPDIR, found %v", dirs)
	}
	_ = p.cmd.Process.Kill()
	<-p.exited
	if !waitUntil(2*time.Minute, func() bool { return !anyAlive(kids) }) {
		t.Fatalf("children still running after the parent's SIGKILL: %s", describeProcs(kids))
	}
	if _, err := os.Stat(dirs[0]); err != nil {
		t.Fatalf("the killed parent's directory is already gone (%v): nothing to sweep", err)
	}
	next := exec.Command(binary(t), "run", "--duration", "100ms", "--warmup", "0s", "--workers", "2", "-q", "-f", "json")
	next.Env = append(os.Environ(), env...)
	if b, err := next.CombinedOutput(); err != nil {
		t.Fatalf("the next run failed: %v\n%s", err, b)
	}
	if _, err := os.Stat(dirs[0]); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the next run left the killed parent's %s (%v)", dirs[0], err)
	}
}

// On a terminal the run's header shows as the run starts, above the status line, and the
// table report takes its place at the end (issue 30, item 19). script(1) gives the run a
// terminal.
func TestE2EHeaderShowsAtStartOnATerminal(t *testing.T) {
	t.Parallel()
	redistest.Require(t)
	script, err := exec.LookPath("script")
	if err != nil {
		t.Skip("no script(1) to give the run a terminal")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b, err := exec.CommandContext(ctx, script, "-qfec", binary(t)+" run --workers 2 --rate 200 --duration 2s --warmup 0s", "/dev/null").CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %q", err, b)
	}
	out := string(b)
	header, status, erase, table := strings.Index(out, "run:"), strings.Index(out, "[1/1 token]"),
		strings.Index(out, "\033[J"), strings.Index(out, "STRATEGY")
	if header < 0 || status < 0 || header > status {
		t.Fatalf("want the header before the first status line: %q", out)
	}
	if erase < status || table < erase || strings.Count(out, "run:") != 2 {
		t.Errorf("want the header erased and printed once more with the report: %q", out)
	}
}
