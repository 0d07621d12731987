package report

import "github.com/lockbench/lockbench/internal/bounded"

// MaxFileBytes bounds what ReadFile reads of a result file. A phase's JSON weighs about
// 13 KB for a 2 s window (its histograms and per-second intervals; more with a longer
// window), so a 10,000-phase sweep of short phases weighs 100 to 150 MB: 256 MiB holds it
// with room, and refuses a wrong path (/dev/zero, a disk image) in one line rather than
// reading it to the end of memory.
const MaxFileBytes = 256 << 20

// ReadFile reads a result file (or the JSON of report compare), refusing one larger than
// MaxFileBytes with an error naming the file and the cap (a usage error: exit 2).
func ReadFile(path string) ([]byte, error) {
	return bounded.ReadFile(path, MaxFileBytes, "a result file")
}
