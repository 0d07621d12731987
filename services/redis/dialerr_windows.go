package redis

import (
	"errors"
	"syscall"
)

// Windows sockets fail with Winsock's error codes. syscall's ECONNREFUSED, ECONNRESET and
// EPIPE exist on Windows too, but as numbers Go made up that no socket call returns.

// wsaECONNREFUSED is WSAECONNREFUSED (winerror.h), which syscall does not name.
const wsaECONNREFUSED syscall.Errno = 10061

// isRefused: nothing listens at the address.
func isRefused(err error) bool { return errors.Is(err, wsaECONNREFUSED) }

// isReset: the peer reset or closed the connection under a read or a write.
func isReset(err error) bool {
	return errors.Is(err, syscall.WSAECONNRESET) || errors.Is(err, syscall.WSAECONNABORTED)
}
