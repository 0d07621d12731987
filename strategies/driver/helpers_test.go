package driver_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/proc"
	"github.com/lockbench/lockbench/internal/redistest"
	"github.com/lockbench/lockbench/services/redis/server"
	"github.com/lockbench/lockbench/strategies"
	_ "github.com/lockbench/lockbench/strategies/driver"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
	binDir    string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// testdriver builds testdata/testdriver once per test binary and returns its path.
func testdriver(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "lockbench-testdriver-")
		if buildErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "testdriver")
		out, err := exec.Command("go", "build", "-o", binPath, "./testdata/testdriver").CombinedOutput()
		if err != nil {
			buildErr = &buildError{string(out), err}
		}
	})
	if buildErr != nil {
		t.Fatalf("build the test driver: %v", buildErr)
	}
	return binPath
}

type buildError struct {
	out string
	err error
}

func (e *buildError) Error() string { return e.err.Error() + ": " + e.out }

// target starts a Redis and returns options that reach it, as the run gives a strategy.
func target(t testing.TB) strategies.Options {
	t.Helper()
	redistest.Require(t)
	s, c := redistest.Server(t)
	return strategies.Options{Client: c, Connect: server.ClientOption(s.Addr), Params: strategies.Params{TTL: strategies.TTLOf(10 * time.Second)}}
}

// build makes driver:CMD with o, closed when t ends.
func build(t testing.TB, cmd string, o strategies.Options) strategies.Strategy {
	t.Helper()
	s, err := strategies.New("driver:"+cmd, o)
	if err != nil {
		t.Fatalf("build driver:%s: %v", cmd, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// gone waits until none of pids runs (a zombie counts as gone), for 10s at most.
func gone(t testing.TB, pids []int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for _, pid := range pids {
		for {
			st := proc.State(pid)
			if st == 0 || st == 'Z' {
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("process %d (state %c) outlived its driver", pid, st)
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// pidsIn reads the pids the test driver wrote to file, waiting for it.
func pidsIn(t testing.TB, file string) []int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, err := os.ReadFile(file)
		if f := strings.Fields(string(b)); err == nil && len(f) == 2 && strings.HasSuffix(string(b), "\n") {
			var pids []int
			for _, s := range f {
				n, _ := strconv.Atoi(s)
				pids = append(pids, n)
			}
			return pids
		}
		if time.Now().After(deadline) {
			t.Fatalf("no pids in %s: %q %v", file, b, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func ctxFor(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
