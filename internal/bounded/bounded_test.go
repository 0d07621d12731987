package bounded_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/internal/bounded"
	"github.com/lockbench/lockbench/internal/usage"
)

// A file up to the cap is read whole; one byte more, or an endless device, is refused in
// one line naming the file and the cap, as a usage error.
func TestReadFileCaps(t *testing.T) {
	dir := t.TempDir()
	at := filepath.Join(dir, "at")
	over := filepath.Join(dir, "over")
	if err := os.WriteFile(at, make([]byte, 1024), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(over, make([]byte, 1025), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, err := bounded.ReadFile(at, 1024, "a test file"); err != nil || len(b) != 1024 {
		t.Errorf("ReadFile of 1024 bytes with a 1 KiB cap: %d bytes, %v; want all of it", len(b), err)
	}
	for path, want := range map[string]string{over: "1 KiB", "/dev/zero": "is a device"} {
		_, err := bounded.ReadFile(path, 1024, "a test file")
		var tl *bounded.TooLargeError
		if !errors.As(err, &tl) || !usage.Is(err) || !strings.Contains(err.Error(), path) ||
			!strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("ReadFile(%s) with a 1 KiB cap: %v; want one line naming the file and saying %q, a usage error", path, err, want)
		}
	}
	// A pipe is read up to the cap, then refused.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	go func() { _, _ = w.Write(make([]byte, 4096)); w.Close() }()
	defer r.Close()
	if _, err := bounded.ReadFile(fmt.Sprintf("/proc/self/fd/%d", r.Fd()), 1024, "a test file"); !strings.Contains(fmt.Sprint(err), "1 KiB") {
		t.Errorf("ReadFile of a pipe of 4 KiB with a 1 KiB cap: %v; want it refused naming the cap", err)
	}
	if _, err := bounded.ReadFile(filepath.Join(dir, "missing"), 1024, "a test file"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ReadFile of a missing file: %v; want os.ErrNotExist", err)
	}
}
