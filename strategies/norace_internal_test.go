//go:build !race

package strategies

const raceEnabled = false
