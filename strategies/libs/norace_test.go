//go:build !race

package libs_test

const raceEnabled = false
