//go:build !linux

package workload

// prefault does nothing off Linux: the start-up's pages fault as it takes them.
func prefault(int) (restore func()) { return func() {} }
