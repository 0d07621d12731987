//go:build !windows

package redis

import (
	"errors"
	"syscall"
)

// isRefused: nothing listens at the address.
func isRefused(err error) bool { return errors.Is(err, syscall.ECONNREFUSED) }

// isReset: the peer reset or closed the connection under a read or a write.
func isReset(err error) bool {
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}
