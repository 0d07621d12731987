// Package postgres measures PostgreSQL as a lock service: the strategy pg-advisory (a
// session-level advisory lock, the database lock seeds 000 and 003 weigh Redis against),
// its workload.Scope (cost per acquire from pg_stat_statements calls, else
// pg_stat_database transactions), and a private cluster spawned on loopback when the run is
// given no address.
//
// There is no lease: the session — one connection — is the lock's life. A holder that
// pauses keeps its lock however long it pauses (nobody overlaps, everybody waits); a
// session that dies (its connection closed, its backend terminated) releases its locks at
// once. Advisory locks belong to the connection that took them, so every owner has a
// connection of its own: through a pool, the unlock could go out on another connection and
// silently fail.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lockbench/lockbench/internal/redact"
	"github.com/lockbench/lockbench/internal/usage"
	"github.com/lockbench/lockbench/services/internal/server"
)

// Service is the name pg-advisory gives in strategies.Info.Service.
const Service = "postgres"

// AppName is the application_name of lockbench's lock sessions: the Backend counts the
// advisory locks they hold.
const AppName = "lockbench"

// Conn is a connection to a PostgreSQL database: what Options.Service carries for
// pg-advisory. The strategy connects a session per owner with Config; Admin serves the
// Backend's reads (one at a time: a pgx.Conn is not for concurrent use).
type Conn struct {
	Config  *pgx.ConnConfig
	Version string // server_version
	// Statements tells that pg_stat_statements is there: cost counts statements, else
	// transactions.
	Statements bool

	// Via, when set, is where the lock's sessions connect instead of the server's
	// host:port: the fault proxies (partition, latency). The admin connection keeps the
	// direct way, so that the cost is read past a partition.
	Via func(addr string) string

	mu     sync.Mutex
	admin  *pgx.Conn
	closed bool

	server *server.Process // the spawned postmaster; nil when external
	dir    string
}

// Dial connects to the database given as addr: a postgres:// URL (with credentials and
// parameters, as libpq takes it) or host:port (user postgres, database postgres).
// Credentials never appear in its errors.
func Dial(ctx context.Context, addr string) (*Conn, error) {
	dsn := addr
	if !strings.Contains(addr, "://") {
		// Not a URL: host:port, checked before anything is dialled or looked up.
		if _, port, err := net.SplitHostPort(addr); err != nil || port == "" {
			return nil, &AddrError{Value: Redact(addr), Valid: "host:port, postgres://[user[:password]@]host[:port][/database][?param=value]"}
		}
		dsn = "postgres://postgres@" + addr + "/postgres"
	}
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil || !(strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")) {
		return nil, &AddrError{Value: Redact(addr), Valid: "host:port, postgres://[user[:password]@]host[:port][/database][?param=value]"}
	}
	c := &Conn{Config: cfg}
	if err := c.connect(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// connect opens Admin and reads what the Backend needs to know.
func (c *Conn) connect(ctx context.Context) error {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	admin, err := pgx.ConnectConfig(ctx, c.Config.Copy())
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			d, _ := ctx.Deadline()
			return fmt.Errorf("PostgreSQL at %s does not answer within %s (is it a PostgreSQL?)", c.Addr(), d.Sub(start).Round(100*time.Millisecond))
		}
		return &connectError{addr: c.Addr(), err: err}
	}
	c.admin = admin
	_ = admin.QueryRow(ctx, "SHOW server_version").Scan(&c.Version)
	c.Version, _, _ = strings.Cut(c.Version, " ")
	var n int
	if err := admin.QueryRow(ctx, "SELECT count(*) FROM pg_extension WHERE extname = 'pg_stat_statements'").Scan(&n); err == nil && n > 0 {
		// The extension may exist without its library loaded: try it.
		_, err := admin.Exec(ctx, "SELECT 1 FROM pg_stat_statements LIMIT 1")
		c.Statements = err == nil
	}
	return nil
}

// session is a new connection for one owner's advisory locks.
func (c *Conn) session(ctx context.Context) (*pgx.Conn, error) {
	cfg := c.Config.Copy()
	cfg.RuntimeParams["application_name"] = AppName
	if via := c.Via; via != nil {
		dial := cfg.DialFunc
		if dial == nil {
			dial = (&net.Dialer{}).DialContext
		}
		cfg.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
			if network != "unix" { // a unix socket has no proxy in front of it
				addr = via(addr)
			}
			return dial(ctx, network, addr)
		}
	}
	return pgx.ConnectConfig(ctx, cfg)
}

// query runs f on Admin, one caller at a time. A connection the server dropped (the kill
// fault restarts it) is opened again, and f tried once more on the new one.
func (c *Conn) query(f func(*pgx.Conn) error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return errors.New("PostgreSQL: the connection is closed")
	}
	if c.admin.IsClosed() {
		if err := c.reconnect(); err != nil {
			return err
		}
	}
	err := f(c.admin)
	if err != nil && c.admin.IsClosed() && c.reconnect() == nil {
		err = f(c.admin)
	}
	return err
}

// reconnect replaces Admin with a new connection.
func (c *Conn) reconnect() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	admin, err := pgx.ConnectConfig(ctx, c.Config.Copy())
	if err != nil {
		return fmt.Errorf("PostgreSQL at %s: %w", c.Addr(), err)
	}
	c.admin = admin
	return nil
}

// Addr is host:port of the server, for the report's target block.
func (c *Conn) Addr() string { return fmt.Sprintf("%s:%d", c.Config.Host, c.Config.Port) }

// Spawned reports whether lockbench started the server.
func (c *Conn) Spawned() bool { return c.server != nil }

// Process is the spawned postmaster (nil for an external server), for the faults.
func (c *Conn) Process() *server.Process { return c.server }

// Close closes Admin and stops the server lockbench spawned (a fast shutdown). Safe to call
// twice.
func (c *Conn) Close() {
	c.mu.Lock()
	c.closed = true
	if c.admin != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_ = c.admin.Close(ctx)
		cancel()
		c.admin = nil
	}
	c.mu.Unlock()
	if c.server != nil {
		c.server.Stop(interrupt, 10*time.Second)
		c.server = nil
	}
	removeDir(c.dir)
	c.dir = ""
}

// Redact replaces the password of an address with ***, in its user part and in a
// password= parameter.
func Redact(s string) string { return redact.Param(redact.Addr(s), "password") }

// AddrError is an address lockbench cannot parse: a usage error (exit 2). Value has its
// password replaced by ***.
type AddrError struct{ Value, Valid string }

func (e *AddrError) Error() string {
	return fmt.Sprintf("%q is not a PostgreSQL address; valid: %s", e.Value, e.Valid)
}

// ExitCode is usage.ExitCode: the user's input is wrong.
func (e *AddrError) ExitCode() int { return usage.ExitCode }

// connectError is pgx's failure to connect in one line: pgx writes a line per address and
// attempt (TLS first, then plain), each "HOST (IP): what", under a header naming the user
// and database; the distinct reasons are kept. Unwrap gives pgx's error.
type connectError struct {
	addr string
	err  error
}

func (e *connectError) Unwrap() error { return e.err }

func (e *connectError) Error() string {
	var reasons []string
	for _, l := range strings.Split(e.err.Error(), "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "failed to connect to ") && strings.HasSuffix(l, ":") {
			continue // the header: user and database
		}
		l = strings.TrimPrefix(l, "failed to connect to ")
		if i := strings.Index(l, "): "); i >= 0 && strings.Contains(l[:i], " (") {
			l = l[i+3:] // "HOST (IP): " in front of each attempt
		}
		for _, p := range []string{"tls error: ", "dial error: ", "hostname resolving error: "} {
			l = strings.TrimPrefix(l, p)
		}
		if l != "" && !slices.Contains(reasons, l) {
			reasons = append(reasons, l)
		}
	}
	return fmt.Sprintf("PostgreSQL at %s: %s", e.addr, strings.Join(reasons, "; "))
}
