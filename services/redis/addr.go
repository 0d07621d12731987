package redis

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/lockbench/lockbench/internal/redact"
)

// Endpoint is one server address as --redis or --sentinel give it, parsed by ParseAddr.
//
// Credentials in a URL belong to that address and win over the flags, part by part: the
// URL's user replaces Auth.Username (--user), its password replaces Auth.Password
// (--password, REDISCLI_AUTH), and what the URL leaves out comes from the flags. For a
// --sentinel address they are the sentinel's credentials (Auth.SentinelUsername,
// Auth.SentinelPassword). rediss:// turns TLS on for the address (with the --tls* settings
// when given, else the system's CAs and the host name of the address); redis:// does not
// turn --tls off.
type Endpoint struct {
	// Addr is host:port, an IPv6 host in brackets: what lockbench dials and prints. It never
	// holds credentials.
	Addr string
	// Username and Password are the URL's credentials; "" = not given.
	Username, Password string
	// DB is the database number of a URL's /db path (SELECT db); 0 when not given. A
	// cluster has database 0 only.
	DB int
	// TLS is set by the rediss:// scheme.
	TLS bool
}

// DefaultPort is the port of a redis:// URL without one; DefaultSentinelPort that of a
// --sentinel URL without one.
const (
	DefaultPort         = 6379
	DefaultSentinelPort = 26379
)

// ParseAddr parses one --redis address: host:port, [ipv6]:port,
// redis://[[user]:password@]host[:port][/db] or the same with rediss:// (TLS). A URL
// without a port means 6379. A malformed address is an *AddrError (Flag "redis") whose
// message shows the address with its password replaced by ***.
func ParseAddr(s string) (Endpoint, error) { return parseAddr("redis", s) }

func parseAddr(flag, s string) (Endpoint, error) {
	bad := func(reason string) (Endpoint, error) {
		return Endpoint{}, &AddrError{Flag: flag, Value: redact.Addr(s), Reason: reason}
	}
	scheme, _, isURL := strings.Cut(s, "://")
	if !isURL {
		if strings.Contains(s, "@") {
			return bad("credentials go in a URL: redis://user:password@host:port, or use --user and --password")
		}
		host, port, err := net.SplitHostPort(s)
		if err != nil {
			if strings.Count(s, ":") > 1 && !strings.HasPrefix(s, "[") {
				return bad("an IPv6 address goes in brackets: [::1]:6379")
			}
			return bad("want host:port")
		}
		if host == "" {
			return bad("no host")
		}
		if _, err := parsePort(port); err != nil {
			return bad(err.Error())
		}
		return Endpoint{Addr: net.JoinHostPort(host, port)}, nil
	}

	var ep Endpoint
	switch strings.ToLower(scheme) {
	case "redis":
	case "rediss":
		ep.TLS = true
	default:
		return bad(fmt.Sprintf("unknown scheme %q: redis:// or rediss:// (TLS)", scheme))
	}
	// url.Parse's errors quote pieces of the URL, which may be pieces of the password: they
	// are never shown.
	u, err := url.Parse(s)
	if err != nil || u.Opaque != "" {
		if !strings.Contains(s, "@") {
			// No user information, so nothing secret: say what is wrong with the port.
			_, rest, _ := strings.Cut(s, "://")
			authority, _, _ := strings.Cut(rest, "/")
			if _, port, err := net.SplitHostPort(authority); err == nil && port != "" {
				if _, err := parsePort(port); err != nil {
					return bad(err.Error())
				}
			}
		}
		if strings.Contains(s, "@") {
			return bad("not a valid URL; in a password, / ? # @ % and : must be percent-encoded (%2F %3F %23 %40 %25 %3A)")
		}
		return bad("not a valid URL")
	}
	if u.RawQuery != "" || u.Fragment != "" || strings.HasSuffix(s, "?") || strings.HasSuffix(s, "#") {
		if u.User != nil || strings.Contains(s, "@") {
			return bad("query parameters are not supported (a ? or # in a password must be percent-encoded: %3F, %23)")
		}
		return bad("query parameters are not supported")
	}
	if u.User != nil {
		pw, hasPassword := u.User.Password()
		if !hasPassword {
			// redis-cli reads redis://secret@host as a password, most client libraries as a
			// user name: refuse to guess.
			return bad("user information without a colon is ambiguous: redis://user:password@host (an ACL user) or redis://:password@host (the default user); a user without a password in the URL goes with --user")
		}
		ep.Username, ep.Password = u.User.Username(), pw
	}
	host, port := u.Hostname(), u.Port()
	if host == "" {
		return bad("no host")
	}
	if strings.HasSuffix(u.Host, ":") {
		return bad("empty port")
	}
	if port == "" {
		port = strconv.Itoa(DefaultPort)
		if flag == "sentinel" {
			port = strconv.Itoa(DefaultSentinelPort)
		}
	}
	if _, err := parsePort(port); err != nil {
		return bad(err.Error())
	}
	ep.Addr = net.JoinHostPort(host, port)
	if db := strings.TrimPrefix(u.Path, "/"); db != "" {
		n, err := strconv.Atoi(db)
		if err != nil || n < 0 || strings.HasPrefix(db, "+") {
			return bad(fmt.Sprintf("the path /%s is not a database number: /0, /1, ...", db))
		}
		ep.DB = n
	}
	return ep, nil
}

func parsePort(p string) (int, error) {
	n, err := strconv.Atoi(p)
	if err != nil || n < 1 || n > 65535 {
		return 0, fmt.Errorf("port %q is not a number from 1 to 65535", p)
	}
	return n, nil
}

// parseAddrs parses the addresses of one flag ("redis" or "sentinel").
func parseAddrs(flag string, addrs []string) ([]Endpoint, error) {
	out := make([]Endpoint, 0, len(addrs))
	for _, a := range addrs {
		ep, err := parseAddr(flag, a)
		if err != nil {
			return nil, err
		}
		out = append(out, ep)
	}
	return out, nil
}

// hostPorts lists the endpoints' host:port addresses.
func hostPorts(eps []Endpoint) []string {
	out := make([]string, len(eps))
	for i, ep := range eps {
		out[i] = ep.Addr
	}
	return out
}

// AddrError is an address lockbench cannot parse: a usage error (exit 2). Value is the
// address as given with its password replaced by *** (see redact.Addr).
type AddrError struct {
	Flag   string // "redis" or "sentinel"; "" means "redis"
	Value  string
	Reason string // what is wrong; "" = not host:port
}

func (e *AddrError) Error() string {
	flag, port := e.Flag, DefaultPort
	if flag == "" {
		flag = "redis"
	}
	if flag == "sentinel" {
		port = DefaultSentinelPort
	}
	reason := e.Reason
	if reason == "" {
		reason = "want host:port"
	}
	return fmt.Sprintf("invalid --%s address %q: %s; valid forms: host:port (e.g. 127.0.0.1:%d), [::1]:%d, redis://[[user]:password@]host[:port][/db], rediss://... for TLS (several: comma-separated)",
		flag, e.Value, reason, port, port)
}

// errNoAddr: an empty address list where one is needed.
var errNoAddr = errors.New("no Redis address given")
