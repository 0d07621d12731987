// Package testbin hands tests the lockbench executable they start as a child process.
package testbin

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// Lockbench is the path of the lockbench command (the module's root package), built
// without the race detector, as `go run` keeps it in the build cache (Go 1.24 and later).
// Linking lockbench takes 7 CPU-s; a `go build -o` per test binary linked it again for
// each package whose tests start it (package main and internal/fleet), on every run. The
// first `go run -exec echo` of a build stores the executable in the cache and prints its
// temporary copy, which is gone when go run ends: the second prints the cached one.
func Lockbench() (string, error) {
	const pkg = "github.com/lockbench/lockbench"
	var out []byte
	for range 2 {
		var err error
		if out, err = exec.Command("go", "run", "-exec", "echo", pkg).Output(); err != nil {
			var exit *exec.ExitError
			if errors.As(err, &exit) {
				return "", fmt.Errorf("build %s: %v\n%s", pkg, err, exit.Stderr)
			}
			return "", fmt.Errorf("build %s: %v", pkg, err)
		}
		if fi, err := os.Stat(strings.TrimSpace(string(out))); err == nil && fi.Mode().IsRegular() {
			return strings.TrimSpace(string(out)), nil
		}
	}
	return "", fmt.Errorf("build %s: go run printed %q, which is not a file", pkg, out)
}
