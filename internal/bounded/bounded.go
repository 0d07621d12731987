// Package bounded reads the files a user names (results, PEM files, state files) up to a
// cap: a wrong path (/dev/zero, a log, a disk image) must be refused in one line, not read
// until the process runs out of memory.
package bounded

import (
	"fmt"
	"io"
	"os"

	"github.com/lockbench/lockbench/internal/usage"
)

// TooLargeError is a file larger than what its reader accepts: a usage error (exit 2).
type TooLargeError struct {
	Path   string
	Limit  int64  // bytes
	What   string // what the file should have been: "a result file"
	Device bool   // Path is a device (/dev/zero): endless, or not a file
}

func (e *TooLargeError) Error() string {
	if e.Device {
		return fmt.Sprintf("%s is a device, not %s", e.Path, e.What)
	}
	return fmt.Sprintf("%s is larger than %s, the most lockbench reads of %s: not one", e.Path, Size(e.Limit), e.What)
}

// ExitCode marks it a usage error.
func (e *TooLargeError) ExitCode() int { return usage.ExitCode }

// ReadFile reads path, refusing with a *TooLargeError a file of more than limit bytes
// (without reading further). Other errors are os.Open's and Read's, path included.
func ReadFile(path string, limit int64, what string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// Refused at once, without reading: a device (/dev/zero reads for ever), a regular file
	// over the cap. A pipe (<(cat run.json)) is read up to the cap.
	if fi, err := f.Stat(); err == nil {
		switch {
		case fi.Mode()&os.ModeDevice != 0:
			return nil, &TooLargeError{Path: path, Limit: limit, What: what, Device: true}
		case fi.Mode().IsRegular() && fi.Size() > limit:
			return nil, &TooLargeError{Path: path, Limit: limit, What: what}
		}
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, &os.PathError{Op: "read", Path: path, Err: err}
	}
	if int64(len(b)) > limit {
		return nil, &TooLargeError{Path: path, Limit: limit, What: what}
	}
	return b, nil
}

// Size writes a cap as people read it: "256 MiB", "1 MiB", "512 KiB", "100 bytes".
func Size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
