//go:build !stagetrace

package workload

// stage marks where a phase is (the start-up done, the warm-up over, the window closed, the
// drain done, ...). Built with -tags stagetrace it prints each stage's time and the process's
// memory to stderr (stage_on.go), to see where a large fleet's run spends its wall time and
// its memory (docs/performance.md); otherwise it is nothing.
func stage(string) {}
