package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/lockbench/lockbench/internal/redistest"
)

// A sweep runs several phases of one strategy: --hdr-dir writes a pair of files for each,
// named by its label, and none overwrites another's.
func TestE2ESweepWritesHDRFilesPerPhase(t *testing.T) {
	t.Parallel()
	srv, _ := redistest.Server(t)
	dir := filepath.Join(t.TempDir(), "hdr")
	code, _, stderr := cli("sweep", "--redis", srv.Addr, "--param", "wait=spin:1ms,pubsub", "-s", "token", "-w", "4",
		"-d", "300ms", "--warmup", "0", "--hdr-dir", dir, "-q")
	if code != exitOK {
		t.Fatalf("sweep: exit %d: %s", code, stderr)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	want := []string{"token-wait=pubsub.hgrm", "token-wait=pubsub.hlog", "token-wait=spin_1ms.hgrm", "token-wait=spin_1ms.hlog"}
	if !slices.Equal(got, want) {
		t.Errorf("--hdr-dir holds %q, want %q: one pair per phase, named by its label", got, want)
	}
}
