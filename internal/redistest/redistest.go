// Package redistest starts real redis-server processes for tests. There is no fake: a test
// that needs Redis gets a server of its own on a free loopback port, stopped in t.Cleanup.
//
// Without redis-server on PATH a test is skipped with an install hint, or fails when the CI
// environment variable is set, so that CI can never pass by skipping.
package redistest

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/lockbench/lockbench/services/redis/server"
)

const installHint = "redis-server not found on PATH; install it (Debian/Ubuntu: apt-get install -y redis-server) or run scripts/test.sh, which does"

// Require skips t (fails it under CI) when redis-server is missing.
func Require(t testing.TB) {
	t.Helper()
	if _, err := server.RedisServerPath(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(installHint)
		}
		t.Skip(installHint)
	}
}

// Start spawns n independent redis-servers (persistence off) and stops them when t ends.
func Start(t testing.TB, n int, extraArgs ...string) []*server.Server {
	t.Helper()
	servers := make([]*server.Server, 0, n)
	for range n {
		servers = append(servers, StartConfig(t, server.ServerConfig{Args: extraArgs}))
	}
	return servers
}

// StartConfig spawns one redis-server as cfg says (a password, TLS, ...) and stops it when
// t ends.
func StartConfig(t testing.TB, cfg server.ServerConfig) *server.Server {
	t.Helper()
	Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := server.StartServer(ctx, cfg)
	if err != nil {
		t.Fatalf("start redis-server: %v", err)
	}
	t.Cleanup(s.Stop)
	return s
}

// Client connects to addr with lockbench's client options, closed when t ends.
func Client(t testing.TB, addr string) rueidis.Client {
	t.Helper()
	c, err := server.NewClient(addr)
	if err != nil {
		t.Fatalf("connect %s: %v", addr, err)
	}
	t.Cleanup(c.Close)
	return c
}

// Server starts one server and returns it with a client.
func Server(t testing.TB) (*server.Server, rueidis.Client) {
	t.Helper()
	s := Start(t, 1)[0]
	return s, Client(t, s.Addr)
}

var prefixSeq atomic.Uint64

// Prefix returns a key prefix unique to t, so that tests sharing a server never share keys.
func Prefix(t testing.TB) string {
	name := strings.NewReplacer("/", ".", " ", "_").Replace(t.Name())
	return fmt.Sprintf("test:%s:%d:", name, prefixSeq.Add(1))
}
