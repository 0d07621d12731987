// Package server runs redis-server processes: spawned on free loopback ports, paused,
// killed, restarted, and always stopped again. It imports nothing of lockbench's engine, so
// that internal/redistest can start servers for any package's tests.
package server

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lockbench/lockbench/internal/proc"
)

// ServerConfig describes one redis-server process to spawn.
type ServerConfig struct {
	// Binary is the redis-server executable. Default: "redis-server" from PATH.
	Binary string
	// Dir is the server's working directory. Default: a new temporary directory, removed by
	// Stop.
	Dir string
	// Port to listen on (127.0.0.1). Default 0: a free port is picked, and picked again if
	// another process takes it first.
	Port int
	// Args are extra configuration directives, e.g. {"--replicaof", "127.0.0.1", "6380"}.
	Args []string
	// Sentinel starts the process in sentinel mode with the given configuration file body
	// (port and dir directives are added).
	Sentinel string
	// StartTimeout bounds the wait for the server to answer. Default 10s.
	StartTimeout time.Duration
	// Password, when set, makes the server require it (requirepass) and use it to
	// authenticate to its master (masterauth: a replica, or a master a failover demotes).
	// It goes into a configuration file in Dir, written 0600, rather than onto the command
	// line, which any user can read in ps (Dir must be private: redis-server rewrites its
	// configuration 0644 on CONFIG REWRITE). The readiness check authenticates through a
	// unix socket in Dir, never over TCP, where another process may have taken the port
	// (unless Dir's path is too long for a socket). For a sentinel it is the sentinel's own
	// requirepass.
	Password string
	// TLS, when set, makes the server accept TLS connections only: Port is its tls-port and
	// the plain port is off. Clients are not asked for certificates. Not for sentinels.
	TLS *ServerTLS
	// Detached starts a process meant to outlive lockbench (`lockbench target up`): it does
	// not die with lockbench, it runs in a session of its own (Ctrl-C in the shell does not
	// reach it), and its output goes to redis.log in Dir instead of memory. Stop and Kill
	// still work from the process that started it; any other process stops it by pid (see
	// Down).
	Detached bool
}

// ServerTLS is the certificate of a TLS-only server (PEM files).
type ServerTLS struct {
	CertFile, KeyFile string // the server's certificate and private key
	// CAFile is the CA that signed CertFile (tls-ca-cert-file); the readiness check
	// verifies the server against it, for the address 127.0.0.1.
	CAFile string
}

// Server is a spawned redis-server. Unless Detached, its process dies with lockbench even if
// lockbench is killed: through the parent-death signal on Linux, a watchdog process on
// macOS and the BSDs (see Start in internal/proc). Stop always reaps it. Windows spawns
// nothing (ErrSpawnUnsupported). A Server is safe for concurrent use.
type Server struct {
	Addr string // 127.0.0.1:port
	Port int

	cfg      ServerConfig
	dir      string
	tempDir  bool
	probeTLS *tls.Config // how the readiness check connects to a TLS server; nil = plain

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{} // closed when the current process has been reaped
	log    output
}

// ErrNoRedisServer means redis-server is not installed.
var ErrNoRedisServer = errors.New("redis-server not found on PATH")

// ErrSpawnUnsupported is what spawning a redis-server returns on Windows (StartServer, Up,
// and Open without an address while redis-server is on PATH): the process control it
// relies on is Unix's. External servers work there.
var ErrSpawnUnsupported = errors.New("spawning redis-server is not supported on Windows: pass --redis host:port of a server you run")

// ErrPauseUnsupported is what Pause and Resume return on Windows, which has no SIGSTOP.
var ErrPauseUnsupported = errors.New("pausing redis-server needs SIGSTOP, which Windows lacks")

// RedisServerPath returns the redis-server executable, or ErrNoRedisServer.
func RedisServerPath() (string, error) {
	p, err := exec.LookPath("redis-server")
	if err != nil {
		return "", ErrNoRedisServer
	}
	return p, nil
}

// StartServer spawns redis-server with persistence off (an empty --save, --appendonly no) and
// returns once the process it started answers on its port (a check of INFO's process_id,
// so that another server that took the port first is never mistaken for it).
func StartServer(ctx context.Context, cfg ServerConfig) (*Server, error) {
	if err := CanSpawn(); err != nil {
		return nil, err
	}
	if cfg.Binary == "" {
		p, err := RedisServerPath()
		if err != nil {
			return nil, err
		}
		cfg.Binary = p
	}
	if cfg.StartTimeout == 0 {
		cfg.StartTimeout = 10 * time.Second
	}
	s := &Server{cfg: cfg, dir: cfg.Dir}
	if cfg.TLS != nil {
		if cfg.Sentinel != "" {
			return nil, errors.New("start redis-server: TLS is not supported for a sentinel")
		}
		ca, err := os.ReadFile(cfg.TLS.CAFile)
		if err != nil {
			return nil, fmt.Errorf("start redis-server: TLS CA: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(ca) {
			return nil, fmt.Errorf("start redis-server: TLS CA %s: no PEM certificate", cfg.TLS.CAFile)
		}
		s.probeTLS = &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}
	}
	if s.dir == "" {
		d, err := MakeTempDir("redis")
		if err != nil {
			return nil, err
		}
		s.dir, s.tempDir = d, true
	}
	var err error
	for try := 0; try < 5; try++ {
		port := cfg.Port
		if port == 0 {
			if port, err = proc.FreePort(); err != nil {
				break
			}
		}
		if err = s.start(ctx, port); err == nil {
			return s, nil
		}
		if cfg.Port != 0 || ctx.Err() != nil {
			break // a fixed port, or the caller gave up: retrying cannot help
		}
	}
	s.cleanupDir()
	return nil, err
}

func (s *Server) start(ctx context.Context, port int) error {
	listen := []string{"--port", strconv.Itoa(port)}
	if s.cfg.TLS != nil {
		listen = []string{"--port", "0", "--tls-port", strconv.Itoa(port),
			"--tls-cert-file", s.cfg.TLS.CertFile, "--tls-key-file", s.cfg.TLS.KeyFile,
			"--tls-ca-cert-file", s.cfg.TLS.CAFile, "--tls-auth-clients", "no"}
	}
	args := append(listen, "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", s.dir,
		"--daemonize", "no", "--logfile", "", "--loglevel", "warning")
	// With a password, the readiness check goes through a unix socket in the server's
	// private directory: AUTH over TCP could reach another process that took the port
	// first. That our process answers at all proves the port is its own (redis-server exits
	// when it cannot bind it).
	var sock string
	if s.cfg.Password != "" {
		if p := filepath.Join(s.dir, fmt.Sprintf("redis-%d.sock", port)); len(p) < maxSocketPath {
			sock = p
		}
	}
	if s.cfg.Password != "" && s.cfg.Sentinel == "" {
		// redis-server reads a configuration file named first, then the options after it.
		conf := filepath.Join(s.dir, "auth.conf")
		body := "requirepass " + ConfQuote(s.cfg.Password) + "\nmasterauth " + ConfQuote(s.cfg.Password) + "\n"
		if err := writePrivate(conf, body); err != nil {
			return fmt.Errorf("write redis-server configuration: %w", err)
		}
		args = append([]string{conf}, args...)
	}
	if s.cfg.Sentinel != "" {
		// A sentinel rewrites its configuration with what it learns (the current master after
		// a failover, the other sentinels): a Restart on the same port keeps that file.
		conf := filepath.Join(s.dir, fmt.Sprintf("sentinel-%d.conf", port))
		body := fmt.Sprintf("port %d\nbind 127.0.0.1\ndir %s\n%s\n", port, s.dir, s.cfg.Sentinel)
		if s.cfg.Password != "" {
			body += "requirepass " + ConfQuote(s.cfg.Password) + "\n"
		}
		if _, err := os.Stat(conf); err != nil {
			if err := writePrivate(conf, body); err != nil {
				return fmt.Errorf("write sentinel configuration: %w", err)
			}
		}
		args = []string{conf, "--sentinel", "--daemonize", "no", "--logfile", "", "--loglevel", "warning"}
	}
	if sock != "" {
		args = append(args, "--unixsocket", sock, "--unixsocketperm", "700")
	}
	args = append(args, s.cfg.Args...)
	cmd := exec.Command(s.cfg.Binary, args...)
	var out output
	if s.cfg.Detached {
		f, err := os.OpenFile(filepath.Join(s.dir, "redis.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return fmt.Errorf("open redis-server log: %w", err)
		}
		defer f.Close() // the child has its own copy of the descriptor
		cmd.Stdout, cmd.Stderr = f, f
		out = fileTail(f.Name())
	} else {
		log := &tailBuffer{max: 8 << 10}
		cmd.Stdout, cmd.Stderr = log, log
		out = log
	}
	if err := startProcess(cmd, s.cfg.Detached); err != nil {
		return fmt.Errorf("start %s: %w", s.cfg.Binary, err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()

	s.mu.Lock()
	s.cmd, s.exited, s.log = cmd, exited, out
	s.Port, s.Addr = port, net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	s.mu.Unlock()

	probe := prober{addr: s.Addr, password: s.cfg.Password, tls: s.probeTLS, unix: sock}
	if err := waitReady(ctx, probe, cmd.Process.Pid, exited, s.cfg.StartTimeout); err != nil {
		s.kill()
		return fmt.Errorf("redis-server on port %d: %w; its output: %s", port, err, strings.TrimSpace(out.String()))
	}
	return nil
}

// writePrivate writes a file only its owner can read: it may hold a password.
func writePrivate(path, body string) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if err := f.Chmod(0o600); err != nil { // an existing file keeps its mode otherwise
		f.Close()
		return err
	}
	if _, err := f.WriteString(body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// ConfQuote quotes s as a redis.conf argument: in double quotes, with backslash, quote and
// every byte outside printable ASCII escaped (\xHH), which redis-server's parser decodes.
func ConfQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := range len(s) {
		switch c := s[i]; {
		case c == '\\' || c == '"':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20 || c >= 0x7f:
			fmt.Fprintf(&b, "\\x%02x", c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// maxSocketPath bounds a unix socket's path (108 bytes on Linux, with the terminating NUL).
const maxSocketPath = 100

// prober is how the readiness check reaches a server it started.
type prober struct {
	addr     string
	password string      // sent with AUTH first when set
	tls      *tls.Config // nil = plain TCP
	unix     string      // a unix socket to use instead of addr; "" = none
}

// waitReady polls INFO until the process pid answers on p.addr (a sentinel answers too), the
// process exits, or the timeout passes.
func waitReady(ctx context.Context, p prober, pid int, exited <-chan struct{}, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		got, err := p.pid()
		if err == nil && got == pid {
			return nil
		}
		select {
		case <-exited:
			return errors.New("exited during start")
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			if err == nil {
				err = fmt.Errorf("another process (pid %d) answers on its port", got)
			}
			return fmt.Errorf("not ready within %s: %w", timeout, err)
		}
	}
}

// pid sends INFO server (after AUTH, with a password) over a raw connection and returns the
// process_id in the reply.
func (p prober) pid() (int, error) {
	d := &net.Dialer{Timeout: 200 * time.Millisecond}
	var c net.Conn
	var err error
	switch {
	case p.unix != "":
		c, err = d.Dial("unix", p.unix)
	case p.tls != nil:
		c, err = tls.DialWithDialer(d, "tcp", p.addr, p.tls)
	default:
		c, err = d.Dial("tcp", p.addr)
	}
	if err != nil {
		return 0, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	var req []byte
	if p.password != "" {
		req = fmt.Appendf(req, "*2\r\n$4\r\nAUTH\r\n$%d\r\n%s\r\n", len(p.password), p.password)
	}
	req = append(req, "*2\r\n$4\r\nINFO\r\n$6\r\nserver\r\n"...)
	if _, err := c.Write(req); err != nil {
		return 0, err
	}
	r := bufio.NewReader(c)
	if p.password != "" {
		line, err := r.ReadString('\n')
		if err != nil {
			return 0, err
		}
		if line = strings.TrimSpace(line); line != "+OK" {
			return 0, fmt.Errorf("AUTH answered %q", line) // a server's reply never holds the password
		}
	}
	line, err := r.ReadString('\n')
	if err != nil {
		return 0, err
	}
	line = strings.TrimSpace(line)
	n, err := strconv.Atoi(strings.TrimPrefix(line, "$"))
	if !strings.HasPrefix(line, "$") || err != nil || n < 0 || n > 1<<20 {
		return 0, fmt.Errorf("INFO answered %q", line)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return 0, err
	}
	for l := range strings.Lines(string(body)) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "process_id:"); ok {
			return strconv.Atoi(v)
		}
	}
	return 0, errors.New("INFO reply without process_id")
}

// Pid returns the current process id, 0 when not running.
func (s *Server) Pid() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil || s.cmd.Process == nil {
		return 0
	}
	select {
	case <-s.exited:
		return 0
	default:
		return s.cmd.Process.Pid
	}
}

// Running reports whether the process is alive (it may be paused).
func (s *Server) Running() bool { return s.Pid() != 0 }

// Kill stops the process with SIGKILL, as a crash would, and reaps it. The server can be
// started again, empty, with Restart.
func (s *Server) Kill() {
	s.kill()
}

func (s *Server) kill() {
	s.mu.Lock()
	cmd, exited := s.cmd, s.exited
	s.mu.Unlock()
	if cmd == nil || cmd.Process == nil {
		return
	}
	if contSignal != nil {
		_ = cmd.Process.Signal(contSignal) // a stopped process must be able to die
	}
	_ = cmd.Process.Kill()
	<-exited
}

// Pause freezes the process (SIGSTOP): it keeps its connections but answers nothing. On
// Windows it returns ErrPauseUnsupported.
func (s *Server) Pause() error { return s.signal(stopSignal) }

// Resume continues a paused process (SIGCONT). On Windows it returns ErrPauseUnsupported.
func (s *Server) Resume() error { return s.signal(contSignal) }

// signal sends sig to the process; a nil sig is one the platform lacks.
func (s *Server) signal(sig os.Signal) error {
	if sig == nil {
		return ErrPauseUnsupported
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil || s.cmd.Process == nil {
		return errors.New("redis-server not running")
	}
	return s.cmd.Process.Signal(sig)
}

// Restart starts the server again on the same port after Kill. Without persistence it comes
// back empty, forgetting every lock it held.
func (s *Server) Restart(ctx context.Context) error {
	s.kill()
	return s.start(ctx, s.Port)
}

// Stop kills the process, reaps it and removes its temporary directory. Safe to call twice.
func (s *Server) Stop() {
	s.kill()
	s.cleanupDir()
}

func (s *Server) cleanupDir() {
	if s.tempDir {
		_ = os.RemoveAll(s.dir)
	}
}

// Output returns the tail of the server's log, for error messages.
func (s *Server) Output() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.log == nil {
		return ""
	}
	return s.log.String()
}

// output is where a server's log can be read back from.
type output interface{ String() string }

// fileTail reads the last 8 KiB of a log file.
type fileTail string

func (f fileTail) String() string {
	b, err := os.ReadFile(string(f))
	if err != nil {
		return ""
	}
	return string(b[max(0, len(b)-8<<10):])
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf bytes.Buffer
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.Write(p)
	if extra := b.buf.Len() - b.max; extra > 0 {
		b.buf.Next(extra)
	}
	return len(p), nil
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
