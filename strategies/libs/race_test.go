//go:build race

package libs_test

// raceEnabled: the race detector slows lockbench's engine (its recorder, its oracle) far more
// than a bare loop around a library, so throughput comparisons between them mean nothing.
const raceEnabled = true
