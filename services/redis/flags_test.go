package redis_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/usage"
	"github.com/lockbench/lockbench/services/redis"
)

// A PEM flag naming an endless file (/dev/zero) or one over 1 MiB is refused in one line
// naming the flag, the file and why, not read until memory runs out.
func TestPEMFilesAreCapped(t *testing.T) {
	big := filepath.Join(t.TempDir(), "big.pem")
	if err := os.WriteFile(big, make([]byte, 2<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		f          redis.Flags
		file, want string
	}{
		{redis.Flags{TLSCA: "/dev/zero"}, "/dev/zero", "is a device"},
		{redis.Flags{TLSCert: "/dev/zero", TLSKey: "/dev/zero"}, "/dev/zero", "is a device"},
		{redis.Flags{TLSCA: big}, big, "larger than 1 MiB"},
	} {
		_, err := tc.f.Auth()
		if err == nil || !usage.Is(err) || !strings.Contains(err.Error(), tc.file) ||
			!strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "--tls-") || strings.Contains(err.Error(), "\n") {
			t.Errorf("Auth() of %+v: %v; want one usage line naming the flag and the file, saying %q", tc.f, err, tc.want)
		}
	}
}

// A Redis port that accepts and never answers is given up on after rueidis's 10s reply
// timeout, whatever --connect-timeout says: the error says the bound that applied (it read
// "within 1h0m0s" after 10s).
func TestUnansweringRedisSaysTheRealBound(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, err = redis.Open(ctx, redis.Spec{Redis: []string{ln.Addr().String()}, ConnectTimeout: time.Hour})
	if err == nil || !strings.Contains(err.Error(), "within 10s") {
		t.Errorf("Open of a silent port with a 1h connect timeout: %v; want it to say within 10s", err)
	}
}

// A run of several processes (--node I/N) needs a Redis they all reach: one given, or a
// live `target up`'s; without either each would spawn its own, so it is refused naming
// --node and --redis.
func TestCheckShared(t *testing.T) {
	t.Parallel()
	f := &redis.Flags{State: filepath.Join(t.TempDir(), "none.json")}
	if err := f.CheckShared("1/2", 2); !usage.Is(err) || !strings.Contains(err.Error(), "invalid --node 1/2: the 2 processes") || !strings.Contains(err.Error(), "--redis") {
		t.Errorf("two processes, no Redis given: %v; want a usage error naming --node and --redis", err)
	}
	if err := f.CheckShared("1/1", 1); err != nil {
		t.Errorf("one process: %v", err)
	}
	f.Redis = "127.0.0.1:6379"
	if err := f.CheckShared("1/2", 2); err != nil {
		t.Errorf("--redis given: %v", err)
	}
}
