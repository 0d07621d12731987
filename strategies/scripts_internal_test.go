package strategies

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/rueidis"

	"github.com/lockbench/lockbench/internal/redistest"
)

// A script runs by EVALSHA; on a server that does not have it (a fresh or restarted one,
// here one told to SCRIPT FLUSH) the NOSCRIPT answer is followed by EVAL, which loads it,
// and the next run is an EVALSHA that finds it: as rueidis's Lua.Exec does.
func TestLuaScriptEvalshaFallsBackToEval(t *testing.T) {
	_, c := redistest.Server(t)
	ctx := context.Background()
	s := newLuaScript(`return {KEYS[1], ARGV[1], ARGV[2]}`)
	if err := c.Do(ctx, c.B().ScriptFlush().Build()).Error(); err != nil {
		t.Fatal(err)
	}
	run := func() {
		t.Helper()
		got, err := s.Exec(ctx, c, []string{"k"}, []string{"a", "b"}).AsStrSlice()
		if err != nil || strings.Join(got, ",") != "k,a,b" {
			t.Fatalf("Exec = %q, %v; want k,a,b", got, err)
		}
	}
	calls := func(cmd string) int64 { return CommandCalls(t, c)[cmd] }
	sha0, eval0 := calls("evalsha"), calls("eval")
	run()
	if sha, eval := calls("evalsha")-sha0, calls("eval")-eval0; sha != 1 || eval != 1 {
		t.Fatalf("after a flush: %d EVALSHA and %d EVAL, want 1 and 1 (NOSCRIPT, then the script itself)", sha, eval)
	}
	exists, err := c.Do(ctx, c.B().ScriptExists().Sha1(s.sha).Build()).AsIntSlice()
	if err != nil || len(exists) != 1 || exists[0] != 1 {
		t.Fatalf("SCRIPT EXISTS %s = %v, %v: the SHA1 computed here is not the server's", s.sha, exists, err)
	}
	run()
	if sha, eval := calls("evalsha")-sha0, calls("eval")-eval0; sha != 2 || eval != 1 {
		t.Fatalf("once loaded: %d EVALSHA and %d EVAL in all, want 2 and 1", sha, eval)
	}
}

// CommandCalls reads INFO commandstats: calls per command, lowercase (subcommands as
// "config|resetstat"). For this package's tests and strategies_test's.
func CommandCalls(t *testing.T, c rueidis.Client) map[string]int64 {
	t.Helper()
	info, err := c.Do(context.Background(), c.B().Info().Section("commandstats").Build()).ToString()
	if err != nil {
		t.Fatal(err)
	}
	calls := map[string]int64{}
	for _, line := range strings.Split(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || !strings.HasPrefix(name, "cmdstat_") {
			continue
		}
		for _, f := range strings.Split(rest, ",") {
			if v, ok := strings.CutPrefix(f, "calls="); ok {
				calls[strings.TrimPrefix(name, "cmdstat_")], _ = strconv.ParseInt(v, 10, 64)
			}
		}
	}
	return calls
}
