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

// Ping sends one ping and waits for its pong: one round trip of the protocol.
func (s *Strategy) Ping() error {
	c, err := s.p.send(request{Type: msgPing}, 0)
	if err != nil {
		return err
	}
	_, _, err = s.p.wait(c, nil)
	return err
}
