package redis

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/redis/rueidis"
)

// The errors of a first connection say what went wrong in terms a user can act on. None
// of them ever holds a password: they name host:port addresses only, and what a server
// replies never echoes a password.

// UnreachableError is a server lockbench could not talk to: nothing listens there
// (connection refused), no connection or no answer within the connect timeout, a peer
// that does not speak RESP (the Redis protocol), or a TLS handshake that failed. The
// message says which, and what to try. A runtime error (the CLI exits 1).
type UnreachableError struct {
	// Addr is what was dialed: host:port (several: comma-separated), or `master "NAME"
	// via sentinels host:port,...`.
	Addr string
	// Timeout is the connect timeout.
	Timeout time.Duration
	// Err is the cause as the client library reported it.
	Err error

	why string // the cause in words, with what to try; "" = a timeout
}

func (e *UnreachableError) Error() string {
	if e.why == "" {
		return fmt.Sprintf("cannot reach Redis at %s within %s: %v", e.Addr, e.Timeout, e.Err)
	}
	return fmt.Sprintf("cannot reach Redis at %s: %s", e.Addr, e.why)
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// AuthError is a server that refused lockbench's credentials: a wrong password, no
// password where the server requires one (NOAUTH), an unknown or disabled ACL user, or a
// user without the permissions lockbench needs. A runtime error (the CLI exits 1). It
// never holds the password.
type AuthError struct {
	// Addr is the server: host:port, or `master "NAME" at host:port` for a master found
	// through sentinels.
	Addr string
	// User is the ACL user lockbench authenticated as; "" = the default user.
	User string
	// Sentinel is set when a sentinel refused: sentinels have credentials of their own
	// (--sentinel-password, or those of a --sentinel URL).
	Sentinel bool
	// NoPassword is set when the server requires a password and none was given.
	NoPassword bool
	// NoPermission is set when the credentials were accepted but the user may not run
	// what lockbench needs.
	NoPermission bool
	// Err is the server's reply.
	Err error
}

func (e *AuthError) Error() string {
	where := "at " + e.Addr
	if e.Sentinel {
		where = "at sentinel " + e.Addr
	}
	as := "as the default user"
	if e.User != "" {
		as = fmt.Sprintf("as user %q", e.User)
	}
	switch {
	case e.NoPassword && e.Sentinel:
		return fmt.Sprintf("authentication failed %s: the sentinel requires a password: --sentinel-password, or redis://:PASSWORD@host:port in --sentinel", where)
	case e.NoPassword:
		return fmt.Sprintf("authentication failed %s: the server requires a password: --password, REDISCLI_AUTH or redis://:PASSWORD@host:port", where)
	case e.NoPermission:
		return fmt.Sprintf("permission denied %s %s: %v; lockbench needs the user to run any command on any key and channel (ACL SETUSER NAME on >PASSWORD ~* &* +@all)", where, as, e.Err)
	}
	flags := "--user/--password (or REDISCLI_AUTH)"
	if e.Sentinel {
		flags = "--sentinel-password"
	}
	return fmt.Sprintf("authentication failed %s %s: wrong password, or no such user, or the user is disabled (%v); check %s or the URL's user:password", where, as, e.Err, flags)
}

func (e *AuthError) Unwrap() error { return e.Err }

// classify turns the error of a first connection (and PING) into an *AuthError, an
// *UnreachableError or a *SpecError that says what to do. addr names the server in the
// message; probe is its host:port, which classify dials again when the cause is ambiguous
// (see probeTLS and probeRESP). flag is the flag that gave the address ("redis" or
// "sentinel"), for the errors about a URL's database; sentinel says a sentinel failed.
func (d dialer) classify(ctx context.Context, flag, addr, probe string, sentinel bool, err error) error {
	var ae *AuthError
	var ue *UnreachableError
	var se *SpecError
	if errors.As(err, &ae) || errors.As(err, &ue) || errors.As(err, &se) {
		return err // classified already
	}
	// A server that accepts and never answers is given up on at the first of the connect
	// timeout and the client's reply timeout (replyTimeout): say the one that applied.
	timeout := min(d.connectTimeout(), replyTimeout)
	unreachable := func(why string) error {
		return &UnreachableError{Addr: addr, Timeout: timeout, Err: err, why: why}
	}
	tlsOn := d.tls != nil
	if sentinel {
		tlsOn = d.sentinelTLS != nil
	}

	if re, ok := rueidis.IsRedisErr(err); ok {
		msg := re.Error()
		code, _, _ := strings.Cut(msg, " ")
		auth := &AuthError{Addr: addr, User: d.user, Sentinel: sentinel, Err: err}
		if sentinel {
			auth.User = d.sentinelUser
		}
		switch {
		case code == "NOAUTH":
			auth.NoPassword = true
			return auth
		case code == "WRONGPASS", strings.Contains(msg, "AUTH <password> called without any password configured"),
			strings.Contains(msg, "invalid password"), strings.Contains(msg, "invalid username-password"):
			return auth
		case code == "NOPERM":
			auth.NoPermission = true
			return auth
		case strings.Contains(msg, "SELECT is not allowed in cluster mode"):
			return &SpecError{Field: flag, Value: addr,
				Reason: fmt.Sprintf("is a cluster node, and a cluster has database 0 only: drop /%d from the URL", d.db)}
		case strings.Contains(msg, "DB index is out of range"):
			return &SpecError{Field: flag, Value: addr,
				Reason: fmt.Sprintf("the server has no database %d (its databases setting is lower): choose a smaller /db in the URL", d.db)}
		}
		return unreachable(fmt.Sprintf("the server refused the connection: %v", err))
	}

	var certErr *tls.CertificateVerificationError
	var unknownCA x509.UnknownAuthorityError
	var badName x509.HostnameError
	var invalid x509.CertificateInvalidError
	var header tls.RecordHeaderError
	switch {
	case errors.As(err, &unknownCA):
		return unreachable(fmt.Sprintf("TLS handshake failed: %v: give the CA that signed the server's certificate with --tls-ca-cert (or skip verification with --tls-insecure)", unknownCA))
	case errors.As(err, &badName):
		return unreachable(fmt.Sprintf("TLS handshake failed: %v: connect by a name the certificate holds, or skip verification with --tls-insecure", badName))
	case errors.As(err, &invalid), errors.As(err, &certErr):
		return unreachable(fmt.Sprintf("TLS handshake failed: %v", err))
	case tlsOn && strings.Contains(err.Error(), "certificate required"):
		return unreachable("TLS handshake failed: the server requires a client certificate: give --tls-cert and --tls-key")
	case errors.As(err, &header):
		return unreachable("TLS handshake failed: the server does not speak TLS: drop --tls, and use redis:// rather than rediss://")
	case isRefused(err):
		return unreachable("connection refused: nothing listens there; is redis-server running, and are the host and port right?")
	case isProtocolError(err):
		return unreachable("the peer does not speak RESP, the Redis protocol: is this a Redis port?")
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), isReset(err):
		switch {
		case tlsOn && !d.hasClientCert(sentinel):
			return unreachable(fmt.Sprintf("the server closed the TLS connection (%v): it may require a client certificate (give --tls-cert and --tls-key), or this is not a TLS port", err))
		case tlsOn:
			return unreachable(fmt.Sprintf("TLS handshake failed: the connection closed (%v): is this a TLS port, and does it accept this client certificate?", err))
		case d.probeTLS(ctx, probe):
			return unreachable("the server speaks TLS: use --tls, or a rediss:// address")
		}
		return unreachable(fmt.Sprintf("the peer does not speak RESP, the Redis protocol: it closed the connection without a Redis reply (%v); is this a Redis port?", err))
	case isTimeout(err):
		if tlsOn && d.probeRESP(ctx, probe) {
			return unreachable(fmt.Sprintf("no TLS handshake within %s, and the server answers plain RESP: it does not speak TLS; drop --tls, and use redis:// rather than rediss://", timeout))
		}
		return unreachable("")
	}
	return unreachable(err.Error())
}

// isProtocolError: the reply was not RESP (rueidis's messages for a first byte or a line
// that RESP does not allow).
func isProtocolError(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "received unknown message type") || strings.Contains(msg, "received unexpected") ||
		strings.Contains(msg, "unbounded redis message")
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()
}

// probeTimeout bounds each diagnostic probe.
const probeTimeout = time.Second

// probeTLS reports whether addr completes a TLS handshake: the diagnosis of a plain
// connection that a server closed. Nothing is sent over the connection but the handshake,
// so the certificate is not verified.
func (d dialer) probeTLS(ctx context.Context, addr string) bool {
	c, err := d.probeDial(ctx, addr)
	if err != nil {
		return false
	}
	defer c.Close()
	host, _, _ := net.SplitHostPort(addr)
	tc := tls.Client(c, &tls.Config{ServerName: host, InsecureSkipVerify: true}) //nolint:gosec // a probe: only the handshake is sent
	return tc.HandshakeContext(ctx) == nil
}

// probeRESP reports whether addr answers an inline PING in RESP (+PONG, or an error such
// as -NOAUTH): the diagnosis of a TLS handshake that got no answer.
func (d dialer) probeRESP(ctx context.Context, addr string) bool {
	c, err := d.probeDial(ctx, addr)
	if err != nil {
		return false
	}
	defer c.Close()
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return false
	}
	b := make([]byte, 1)
	if _, err := io.ReadFull(c, b); err != nil {
		return false
	}
	return b[0] == '+' || b[0] == '-'
}

func (d dialer) probeDial(ctx context.Context, addr string) (net.Conn, error) {
	if d.rewrite != nil {
		addr = d.rewrite(addr)
	}
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	nd := net.Dialer{Timeout: probeTimeout}
	c, err := nd.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	_ = c.SetDeadline(time.Now().Add(probeTimeout))
	return c, nil
}

// hasClientCert tells whether the connection presents a client certificate (--tls-cert).
func (d dialer) hasClientCert(sentinel bool) bool {
	cfg := d.tls
	if sentinel {
		cfg = d.sentinelTLS
	}
	return cfg != nil && (len(cfg.Certificates) > 0 || cfg.GetClientCertificate != nil)
}
