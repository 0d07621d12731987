package redis_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/internal/redistest"
	"github.com/lockbench/lockbench/services/redis"
)

// upSingle starts a single `target up` server recorded in a state file of the test's own,
// and kills it by pid when t ends, whatever the state file says by then.
func upSingle(t *testing.T) (string, *redis.State) {
	t.Helper()
	statePath := filepath.Join(t.TempDir(), "state.json")
	st, err := redis.Up(context.Background(), redis.Single, statePath)
	if err != nil {
		t.Fatalf("Up: %v", err)
	}
	t.Cleanup(func() {
		for _, pid := range st.Pids {
			if p, err := os.FindProcess(pid); err == nil && !gone(pid) {
				_ = p.Kill()
			}
		}
		_ = os.RemoveAll(st.Dir)
	})
	return statePath, st
}

// wantStateError fails t unless err is a usage error (exit 2) on statePath containing why.
func wantStateError(t *testing.T, op string, err error, statePath, why string) {
	t.Helper()
	var se *redis.StateError
	var ec interface{ ExitCode() int }
	if !errors.As(err, &se) || !errors.As(err, &ec) || ec.ExitCode() != 2 ||
		!strings.Contains(err.Error(), statePath) || !strings.Contains(err.Error(), why) {
		t.Fatalf("%s: want a *StateError (exit 2) naming %s and saying %q, got %T: %v", op, statePath, why, err, err)
	}
}

// A state file someone else could have written is refused by everything that reads it:
// it would choose what Down kills and where a run sends its password. Nothing is killed.
func TestStateFileOthersCouldWriteIsRefused(t *testing.T) {
	redistest.Require(t)
	t.Parallel()
	statePath, st := upSingle(t)
	cases := []struct {
		name string
		mode os.FileMode
		uid  int
		why  string
	}{
		{"world-writable", 0o606, -1, "writable by group or others (mode 0606)"},
		{"group-writable", 0o620, -1, "writable by group or others (mode 0620)"},
	}
	if os.Getuid() == 0 { // only root can give a file away
		cases = append(cases, struct {
			name string
			mode os.FileMode
			uid  int
			why  string
		}{"another user's", 0o600, 65534, "owned by uid 65534, not by this user (uid 0)"})
	}
	for _, c := range cases {
		if err := os.Chmod(statePath, c.mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(statePath, c.uid, -1); err != nil {
			t.Fatal(err)
		}
		_, err := redis.Open(context.Background(), redis.Spec{StatePath: statePath})
		wantStateError(t, c.name+": Open", err, statePath, c.why)
		wantStateError(t, c.name+": Down", redis.Down(statePath), statePath, c.why)
		_, _, err = redis.Status(statePath)
		wantStateError(t, c.name+": Status", err, statePath, c.why)
		_, err = redis.Up(context.Background(), redis.Single, statePath)
		wantStateError(t, c.name+": Up", err, statePath, c.why)
		if gone(st.Pids[0]) {
			t.Fatalf("%s: the server was killed", c.name)
		}
		if _, err := os.Stat(statePath); err != nil {
			t.Fatalf("%s: the state file: %v", c.name, err)
		}
		if err := os.Chown(statePath, os.Getuid(), -1); err != nil {
			t.Fatal(err)
		}
	}

	if err := os.Chmod(statePath, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := redis.Down(statePath); err != nil {
		t.Fatalf("Down once the file is the user's alone: %v", err)
	}
	requireGone(t, st.Pids, 0)
}

// Down kills only the redis-server Up started: a recorded pid that now runs something
// else, even under redis-server's title with the recorded address, is left running, and
// Down says so. Nothing it started runs any more, so the state file goes.
func TestDownKillsOnlyTheServerUpStarted(t *testing.T) {
	redistest.Require(t)
	t.Parallel()
	statePath, st := upSingle(t)
	original, err := os.ReadFile(statePath)
	if err != nil {
		t.Fatal(err)
	}
	sleepPath, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep(1):", err)
	}
	start := func(argv0 string) int {
		cmd := &exec.Cmd{Path: sleepPath, Args: []string{argv0, "60"}}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		return cmd.Process.Pid
	}
	others := []struct {
		name, why string
		pid       int
	}{
		{"sleep", `it runs "sleep 60"`, start("sleep")},
		// redis-server's title, but no listener on the port.
		{"a look-alike", "it does not listen on port", start("redis-server " + st.Addrs[0])},
	}
	for _, o := range others {
		var m map[string]any
		if err := json.Unmarshal(original, &m); err != nil {
			t.Fatal(err)
		}
		m["pids"] = []int{o.pid}
		b, _ := json.Marshal(m)
		if err := os.WriteFile(statePath, b, 0o600); err != nil {
			t.Fatal(err)
		}
		if _, nodes, err := redis.Status(statePath); err != nil || nodes[0].Alive {
			t.Fatalf("Status with %s's pid recorded: %+v, %v; want not alive", o.name, nodes, err)
		}
		err := redis.Down(statePath)
		if err == nil || !strings.Contains(err.Error(), "pid "+strconv.Itoa(o.pid)+" not killed") || !strings.Contains(err.Error(), o.why) {
			t.Fatalf("Down with %s's pid recorded: want a refusal saying %q, got %v", o.name, o.why, err)
		}
		if gone(o.pid) {
			t.Fatalf("Down killed %s (pid %d)", o.name, o.pid)
		}
		if _, serr := os.Stat(statePath); !errors.Is(serr, os.ErrNotExist) || !strings.Contains(err.Error(), "state file "+statePath+" removed") {
			t.Fatalf("Down with %s's pid recorded: the state file: %v; want it removed, and said", o.name, serr)
		}
	}

	if err := os.WriteFile(statePath, original, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := redis.Down(statePath); err != nil {
		t.Fatalf("Down of the real server: %v", err)
	}
	requireGone(t, st.Pids, 0)
}

// The state file lives in the user's own state directory, never in the shared temporary
// one; Up creates it private, Open and Down find it there.
func TestDefaultStatePath(t *testing.T) {
	home, xdg, tmp := t.TempDir(), t.TempDir(), t.TempDir()
	t.Setenv("TMPDIR", tmp)
	t.Setenv("HOME", home)
	t.Setenv("XDG_STATE_HOME", "")
	want := filepath.Join(home, ".local", "state", "lockbench", "target.json")
	if got := redis.DefaultStatePath(); got != want {
		t.Fatalf("DefaultStatePath() without XDG_STATE_HOME = %s, want %s", got, want)
	}
	t.Setenv("XDG_STATE_HOME", "relative/state") // invalid by the XDG spec: ignored
	if got := redis.DefaultStatePath(); got != want {
		t.Fatalf("DefaultStatePath() with a relative XDG_STATE_HOME = %s, want %s", got, want)
	}
	if runtime.GOOS == "linux" { // os.UserCacheDir reads XDG_CACHE_HOME here
		cache := t.TempDir()
		t.Setenv("HOME", "")
		t.Setenv("XDG_CACHE_HOME", cache)
		if got, want := redis.DefaultStatePath(), filepath.Join(cache, "lockbench", "target.json"); got != want {
			t.Fatalf("DefaultStatePath() without a home = %s, want %s", got, want)
		}
		t.Setenv("XDG_CACHE_HOME", "")
		if got := redis.DefaultStatePath(); got != "" {
			t.Fatalf("DefaultStatePath() with no directory of the user's = %s, want \"\"", got)
		}
		var se *redis.StateError
		if err := redis.Down(""); !errors.As(err, &se) || !strings.Contains(err.Error(), "--state") {
			t.Fatalf("Down with no directory for the state file: want a *StateError hinting --state, got %v", err)
		}
		t.Setenv("HOME", home)
	}
	t.Setenv("XDG_STATE_HOME", xdg)
	want = filepath.Join(xdg, "lockbench", "target.json")
	if got := redis.DefaultStatePath(); got != want {
		t.Fatalf("DefaultStatePath() = %s, want %s", got, want)
	}

	redistest.Require(t)
	st, err := redis.Up(context.Background(), "", "")
	if err != nil {
		t.Fatalf("Up: %v", err)
	}
	t.Cleanup(func() { _ = redis.Down(want) })
	for path, mode := range map[string]os.FileMode{filepath.Dir(want): 0o700 | os.ModeDir, want: 0o600} {
		if fi, err := os.Stat(path); err != nil || fi.Mode() != mode {
			t.Fatalf("%s after Up: %v, %v; want mode %v", path, fi.Mode(), err, mode)
		}
	}
	c, err := redis.Open(context.Background(), redis.Spec{}) // as a run without --state
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	if c.Mode != "spawned" || !slices.Equal(c.Addrs, st.Addrs) {
		t.Fatalf("Open found %s %v, want the `target up` servers %v", c.Mode, c.Addrs, st.Addrs)
	}
	c.Close()
	if err := redis.Down(""); err != nil {
		t.Fatalf("Down: %v", err)
	}
	requireGone(t, st.Pids, 0)
	if _, err := os.Stat(want); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("state file after Down: %v", err)
	}
}

// A file that is not a state file (a system file, garbage, a directory) is refused by up,
// down, status and a run's Open in one line that says so: never a hint to delete it by
// hand, and the file is left as it was.
func TestNotAStateFileIsRefused(t *testing.T) {
	dir := t.TempDir()
	passwd := filepath.Join(dir, "passwd")
	garbage := filepath.Join(dir, "garbage")
	empty := filepath.Join(dir, "empty.json")
	for path, body := range map[string]string{
		passwd:  "root:x:0:0:root:/root:/bin/bash\n",
		garbage: "garbage\x7f",
		empty:   "{}\n",
	} {
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, path := range []string{passwd, garbage, empty, dir} {
		_, _, err := redis.Status(path)
		wantStateError(t, "Status("+path+")", err, path, "not a state file")
		err = redis.Down(path)
		wantStateError(t, "Down("+path+")", err, path, "not a state file")
		_, err = redis.Up(context.Background(), redis.Single, path)
		wantStateError(t, "Up("+path+")", err, path, "not a state file")
		for _, e := range []error{err, redis.Down(path)} {
			if strings.Contains(e.Error(), "by hand") || strings.Contains(e.Error(), "\n") {
				t.Errorf("%s: %v; want one line without a hint to delete the file", path, e)
			}
		}
		if fi, err := os.Stat(path); err != nil || (!fi.IsDir() && fi.Size() == 0) {
			t.Errorf("%s after up/down/status: %v; want it left as it was", path, err)
		}
	}
}

// A command line a message suggests repeats the --state the user gave.
func TestStateHintsRepeatTheStateFlag(t *testing.T) {
	path := filepath.Join(t.TempDir(), "my state.json")
	_, _, err := redis.Status(path)
	if err == nil || !errors.Is(err, redis.ErrNotUp) || !strings.Contains(err.Error(), "lockbench target up --state '"+path+"'") {
		t.Errorf("Status of a missing %s: %v; want a hint `lockbench target up --state '%s'`", path, err, path)
	}
	redistest.Require(t)
	statePath, _ := upSingle(t)
	_, err = redis.Up(context.Background(), redis.Single, statePath)
	if !errors.Is(err, redis.ErrAlreadyUp) || !strings.Contains(err.Error(), "lockbench target down --state "+statePath) {
		t.Errorf("Up twice on %s: %v; want a hint `lockbench target down --state %s`", statePath, err, statePath)
	}
}
