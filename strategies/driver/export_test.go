package driver

import "time"

// SetTimeouts shortens Grace and the hello timeout for a test; the returned func restores them.
func SetTimeouts(grace, hello time.Duration) (restore func()) {
	g, h := Grace, helloTimeout
	Grace, helloTimeout = grace, hello
	return func() { Grace, helloTimeout = g, h }
}

// Pid is the driver's process id.
func (s *Strategy) Pid() int { return s.p.cmd.Process.Pid }
