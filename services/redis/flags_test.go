package redis_test

import (
	"strings"
	"testing"

	"github.com/lockbench/lockbench/internal/usage"
	"github.com/lockbench/lockbench/services/redis"
)

// A PEM flag naming an endless file (/dev/zero) is refused in one line naming the flag,
// the file and the cap, not read until memory runs out.
func TestPEMFilesAreCapped(t *testing.T) {
	for _, f := range []redis.Flags{
		{TLSCA: "/dev/zero"},
		{TLSCert: "/dev/zero", TLSKey: "/dev/zero"},
	} {
		_, err := f.Auth()
		if err == nil || !usage.Is(err) || !strings.Contains(err.Error(), "/dev/zero") ||
			!strings.Contains(err.Error(), "1 MiB") || !strings.Contains(err.Error(), "--tls-") || strings.Contains(err.Error(), "\n") {
			t.Errorf("Auth() of %+v: %v; want one usage line naming the flag, the file and the 1 MiB cap", f, err)
		}
	}
}
