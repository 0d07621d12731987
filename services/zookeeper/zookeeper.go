// Package zookeeper measures ZooKeeper as a lock service: the strategy zk-lock (the lock
// recipe of the ZooKeeper documentation, which seeds 000 and 003 weigh Redis against:
// an ephemeral sequential znode per waiter, the lowest holds the lock, each other waiter
// watches its predecessor), its workload.Scope (cost per acquire from the `mntr` four-letter
// word's packet counts), and a private ZooKeeper spawned on loopback when the run is given
// no address.
//
// The session is the lease: its timeout is the lock's ttl, the client's pings its watchdog.
// A holder frozen longer than the session timeout (a stop-the-world pause freezes its
// pings too) loses its session, ZooKeeper deletes its znode and the next waiter enters;
// the znode's sequence number, which only grows, is a fencing token that makes the overlap
// harmless where the resource checks it.
package zookeeper

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/lockbench/lockbench/internal/redact"
	"github.com/lockbench/lockbench/internal/usage"
	"github.com/lockbench/lockbench/services/internal/server"
)

// Service is the name zk-lock gives in strategies.Info.Service.
const Service = "zookeeper"

// CostUnit says what the CMD/ACQ column counts for ZooKeeper.
const CostUnit = "ZooKeeper requests = packets the server received (mntr zk_packets_received, pings included)"

// Conn is a connection to a ZooKeeper ensemble: what Options.Service carries for zk-lock.
// The strategy opens a session of its own per worker from Servers and Auth; Client is the
// Backend's own session.
type Conn struct {
	Servers []string // host:port of every server
	// Auth is the digest credential "user:password" of a zk:// URL, "" without one.
	Auth    string
	Client  *zk.Conn
	Version string // from `srvr`, "" when unread

	// Via, when set, is where the lock's sessions connect instead of a server's host:port:
	// the fault proxies (partition, latency). Client, the Backend's own, keeps the direct
	// way, so that the cost and the cleanup are read past a partition.
	Via func(addr string) string

	// LostOnSuspended makes a zk-lock lease lost (its Lost closed) as soon as its session's
	// connection is lost, as Curator tells its users to read SUSPENDED, rather than only
	// when the session expires. The session, and the znode, may well survive: a holder that
	// aborts on it (--on-lost abort) gives up a lock it may still hold, never writes with
	// one it lost. Set it before the strategy is built; LostNote says which reading a run used.
	LostOnSuspended bool

	servers []*server.Process // the spawned server, for its CPU; nil when external
	dir     string
}

// Dial connects to the ZooKeeper given as addr: host:port, zk://[user:password@]host:port,
// or several host:port separated by commas (an ensemble). A user and password become a
// digest credential. Credentials never appear in its errors.
func Dial(ctx context.Context, addr string) (*Conn, error) {
	c := &Conn{}
	rest := addr
	if scheme, after, ok := strings.Cut(addr, "://"); ok {
		u, err := url.Parse(addr)
		if err != nil || scheme != "zk" || u.Host == "" {
			return nil, &AddrError{Value: redact.Addr(addr), Valid: "host:port, zk://[user:password@]host:port, comma-separated for an ensemble"}
		}
		if u.User != nil {
			p, _ := u.User.Password()
			c.Auth = u.User.Username() + ":" + p
		}
		rest = after
		if i := strings.LastIndexByte(rest, '@'); i >= 0 {
			rest = rest[i+1:]
		}
		rest = strings.TrimSuffix(rest, "/")
	}
	for _, s := range strings.Split(rest, ",") {
		s = strings.TrimSpace(s)
		if _, _, err := net.SplitHostPort(s); err != nil {
			return nil, &AddrError{Value: redact.Addr(addr), Valid: "host:port, zk://[user:password@]host:port, comma-separated for an ensemble"}
		}
		c.Servers = append(c.Servers, s)
	}
	if err := c.connect(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// connect opens the Backend's session and waits until it is established.
func (c *Conn) connect(ctx context.Context) error {
	cli, err := c.session(10*time.Second, nil, nil)
	if err != nil {
		return err
	}
	// A server that has just started may answer ruok before it takes sessions: the first
	// requests can fail while the client gets through. On a busy machine that took over
	// 10s, so a spawned server (a ctx with no deadline) gets 30s; a server the user named
	// gets the caller's deadline (--connect-timeout), as etcd and PostgreSQL do.
	start := time.Now()
	deadline := start.Add(30 * time.Second)
	if d, ok := ctx.Deadline(); ok {
		deadline = d
	}
	wctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	// Exists waits until the server answers or the client gives up on it: a port that
	// accepts and never answers (a Redis, a dead proxy) holds it for over a minute, deaf to
	// the deadline and to Ctrl-C. Closing the client when wctx ends returns it at once.
	stop := context.AfterFunc(wctx, cli.Close)
	for {
		_, _, err := cli.Exists("/")
		if err == nil && stop() {
			break
		}
		if wctx.Err() != nil {
			// The AfterFunc closes the client (which waits up to 1s for the server's
			// goodbye); the caller need not wait for it.
			if ctx.Err() == context.Canceled {
				return fmt.Errorf("ZooKeeper at %s: %w", strings.Join(c.Servers, ","), ctx.Err())
			}
			return fmt.Errorf("ZooKeeper at %s does not answer within %s (is it a ZooKeeper?)",
				strings.Join(c.Servers, ","), deadline.Sub(start).Round(100*time.Millisecond))
		}
		select {
		case <-wctx.Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
	c.Client = cli
	if out, err := fourLetter(ctx, c.Servers[0], "srvr"); err == nil {
		for l := range strings.Lines(out) {
			if v, ok := strings.CutPrefix(l, "Zookeeper version: "); ok {
				c.Version, _, _ = strings.Cut(strings.TrimSpace(v), "-")
			}
		}
	}
	return nil
}

// session opens a silent session with the given timeout, dialing through dialer and
// calling cb with its events when they are not nil.
func (c *Conn) session(timeout time.Duration, dialer zk.Dialer, cb zk.EventCallback) (*zk.Conn, error) {
	opts := options(zk.WithLogger(silent{}), zk.WithLogInfo(false))
	if dialer != nil {
		opts = append(opts, zk.WithDialer(dialer))
	}
	if cb != nil {
		opts = append(opts, zk.WithEventCallback(cb))
	}
	cli, _, err := zk.Connect(c.Servers, timeout, opts...)
	if err != nil {
		return nil, fmt.Errorf("ZooKeeper session to %s: %w", strings.Join(c.Servers, ","), err)
	}
	if c.Auth != "" {
		if err := cli.AddAuth("digest", []byte(c.Auth)); err != nil {
			cli.Close()
			return nil, fmt.Errorf("ZooKeeper digest auth: %w", err)
		}
	}
	return cli, nil
}

// options makes a slice of go-zookeeper's options, whose type it does not export.
func options[T any](o ...T) []T { return o }

// acl is what lockbench creates its znodes with: open, or only its own digest user's.
func (c *Conn) acl() []zk.ACL {
	if c.Auth != "" {
		return zk.DigestACL(zk.PermAll, strings.SplitN(c.Auth, ":", 2)[0], strings.SplitN(c.Auth+":", ":", 3)[1])
	}
	return zk.WorldACL(zk.PermAll)
}

// Addrs are the servers' host:port, for the report's target block.
func (c *Conn) Addrs() []string { return append([]string(nil), c.Servers...) }

// Spawned reports whether lockbench started the server.
func (c *Conn) Spawned() bool { return c.servers != nil }

// Close closes the Backend's session and stops the server lockbench spawned. Safe to call
// twice.
func (c *Conn) Close() {
	if c.Client != nil {
		c.Client.Close()
		c.Client = nil
	}
	for _, p := range c.servers {
		p.Stop(nil, 0)
	}
	c.servers = nil
	removeDir(c.dir)
	c.dir = ""
}

// fourLetter sends a four-letter word (mntr, srvr, ruok) and returns the answer.
func fourLetter(ctx context.Context, addr, word string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return "", err
	}
	defer nc.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = nc.SetDeadline(dl)
	}
	if _, err := nc.Write([]byte(word)); err != nil {
		return "", err
	}
	var b strings.Builder
	sc := bufio.NewScanner(nc)
	for sc.Scan() {
		b.WriteString(sc.Text())
		b.WriteByte('\n')
	}
	if b.Len() == 0 {
		if err := sc.Err(); err != nil {
			return "", err
		}
		return "", fmt.Errorf("%s: empty answer (is it in 4lw.commands.whitelist?)", word)
	}
	return b.String(), nil
}

// silent is the go-zookeeper logger lockbench gives it: the client logs every reconnect,
// which a lease-expiry fault provokes by the dozen.
type silent struct{}

func (silent) Printf(string, ...any) {}

// AddrError is an address lockbench cannot parse: a usage error (exit 2). Value has its
// password replaced by ***.
type AddrError struct{ Value, Valid string }

func (e *AddrError) Error() string {
	return fmt.Sprintf("%q is not a ZooKeeper address; valid: %s", e.Value, e.Valid)
}

// ExitCode is usage.ExitCode: the user's input is wrong.
func (e *AddrError) ExitCode() int { return usage.ExitCode }

// LostNote is the note that says which loss a run's zk-lock leases signal.
func (c *Conn) LostNote() string {
	if c.LostOnSuspended {
		return "zk-lock: a lease counts as lost when its session's connection is (Curator's SUSPENDED), not only when the session expires"
	}
	return "zk-lock: a lease counts as lost only when its session expires; a lost connection (Curator's SUSPENDED) does not signal it"
}
