package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/internal/redistest"
)

// lua:DIR through the command line: the broken example's blind DEL reads UNSAFE with
// misdeletes under a holder paused past its ttl; the token example, under the same pause,
// may let a second holder in (no watchdog) but never deletes another's lock.
func TestE2ELuaExamplesUnderAPause(t *testing.T) {
	t.Parallel()
	redistest.Require(t)
	s, code, stderr := runJSON(t, "run", "--strategy", "lua:examples/broken,lua:examples/token",
		"--fault", "holder-pause:p=0.5,d=300ms", "--ttl", "100ms", "--workers", "8", "--duration", "1s", "--warmup", "0")
	if s == nil || len(s.Results) != 2 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	broken, token := s.Results[0], s.Results[1]
	if broken.Strategy != "lua:examples/broken" || token.Strategy != "lua:examples/token" {
		t.Fatalf("phases %s, %s", broken.Strategy, token.Strategy)
	}
	if !strings.HasPrefix(broken.Verdict, "UNSAFE") || broken.Safety.Misdeletes == 0 {
		t.Errorf("broken example: %d acquired, %d misdeletes, verdict %q; want UNSAFE with misdeletes", broken.Acquired, broken.Safety.Misdeletes, broken.Verdict)
	}
	if token.Acquired == 0 || token.Safety.Misdeletes != 0 {
		t.Errorf("token example: %d acquired, %d misdeletes; its compare-and-delete deletes no other's lock", token.Acquired, token.Safety.Misdeletes)
	}
}

// A script that does not parse, or a missing file, is a one-line usage error naming the
// file (and the line) before anything connects: the address here answers nobody.
func TestLuaBadScriptsExit2(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "acquire.lua"), []byte("if redis.call('GET', KEYS[1]) then\n  return 1\nend end\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := cli("run", "--strategy", "lua:"+dir, "--redis", "127.0.0.1:1", "-d", "1s")
	if code != exitUsage || strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.Contains(stderr, "acquire.lua line 3: syntax error near 'end'") {
		t.Errorf("syntax error: exit %d, %q; want 2 and one line naming acquire.lua line 3", code, stderr)
	}
	if err := os.WriteFile(filepath.Join(dir, "acquire.lua"), []byte("return 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = cli("run", "--strategy", "token,lua:"+dir, "--redis", "127.0.0.1:1", "-d", "1s")
	if code != exitUsage || !strings.Contains(stderr, "release.lua: missing") {
		t.Errorf("missing release.lua: exit %d, %q; want 2 naming release.lua", code, stderr)
	}
	prof := filepath.Join(t.TempDir(), "p.yaml")
	if err := os.WriteFile(prof, []byte("duration: 1s\nphases:\n  - strategy: lua:"+dir+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = cli("run", "--profile", prof, "--redis", "127.0.0.1:1")
	if code != exitUsage || !strings.Contains(stderr, "line 3") || !strings.Contains(stderr, "release.lua: missing") {
		t.Errorf("profile: exit %d, %q; want 2 naming the profile's line and release.lua", code, stderr)
	}
}

// `lockbench strategies NAME...` lists the names given, a lock of one's own among them, with
// what lockbench read from its files.
func TestStrategiesShowsALuaLock(t *testing.T) {
	t.Parallel()
	code, stdout, stderr := cli("strategies", "lua:examples/token", "token")
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if code != exitOK || len(lines) != 3 {
		t.Fatalf("exit %d, %d lines: %s%s", code, len(lines), stdout, stderr)
	}
	lua := strings.Fields(lines[1])
	if lua[0] != "lua:examples/token" || lua[1] != "yes" || lua[2] != "-" || lua[3] != "yes" || !strings.Contains(lines[1], "Lua scripts in examples/token") {
		t.Errorf("want the lua lock with safe unlock and auto-renew as its files declare: %s", lines[1])
	}
	if !strings.HasPrefix(lines[2], "token ") {
		t.Errorf("second row: %s", lines[2])
	}
	if code, _, stderr := cli("strategies", "lua:nowhere"); code != exitUsage || !strings.Contains(stderr, "no directory nowhere") {
		t.Errorf("strategies lua:nowhere: exit %d, %q; want 2", code, stderr)
	}
}
