package bounded_test

import (
	"errors"
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
	for _, path := range []string{over, "/dev/zero"} {
		_, err := bounded.ReadFile(path, 1024, "a test file")
		var tl *bounded.TooLargeError
		if !errors.As(err, &tl) || !usage.Is(err) || !strings.Contains(err.Error(), path) ||
			!strings.Contains(err.Error(), "1 KiB") || strings.Contains(err.Error(), "\n") {
			t.Errorf("ReadFile(%s) with a 1 KiB cap: %v; want one line naming the file and the cap, a usage error", path, err)
		}
	}
	if _, err := bounded.ReadFile(filepath.Join(dir, "missing"), 1024, "a test file"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ReadFile of a missing file: %v; want os.ErrNotExist", err)
	}
}
