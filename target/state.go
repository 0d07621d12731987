package target

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/lockbench/lockbench/internal/proc"
)

// DefaultStatePath is where `lockbench target up` records what it started:
// lockbench-target.json in the temporary directory ($TMPDIR or /tmp).
func DefaultStatePath() string { return filepath.Join(os.TempDir(), "lockbench-target.json") }

// State is what `lockbench target up` started, as its JSON state file records it.
type State struct {
	Topology string `json:"topology"`
	// Addrs are the data nodes in Conn.Servers order (see Conn.Servers).
	Addrs []string `json:"addrs"`
	// SentinelAddrs and MasterName: the sentinels and master set name of a sentinel topology.
	SentinelAddrs []string `json:"sentinel_addrs,omitempty"`
	MasterName    string   `json:"master_name,omitempty"`
	// Pids are the processes of Addrs, then of SentinelAddrs, in the same order.
	Pids []int `json:"pids"`
	// RequirePass is set when the servers require a password (UpAuth): runs must give it
	// (--password). The password itself is never stored.
	RequirePass bool `json:"requirepass,omitempty"`
	// Dir holds the servers' working directories and logs (redis.log); removed by Down.
	Dir          string    `json:"dir"`
	RedisVersion string    `json:"redis_version"`
	StartedAt    time.Time `json:"started_at"`
	// Stale is set by Status when none of the recorded processes is alive any more; it is
	// never stored.
	Stale bool `json:"stale,omitempty"`

	path string
}

// NodeStatus is one recorded process as Status found it.
type NodeStatus struct {
	// Role is master, replica or sentinel: what the node answers to ROLE (a failover
	// changes it), else its role at startup.
	Role      string `json:"role"`
	Addr      string `json:"addr"`
	Pid       int    `json:"pid"`
	Alive     bool   `json:"alive"`     // the pid is still a redis-server process
	Answering bool   `json:"answering"` // it answered a ROLE request within 1 s
	Error     string `json:"error,omitempty"`
}

var (
	// ErrNotUp: no state file, so no `lockbench target up` topology to use or stop.
	ErrNotUp = errors.New("no target is up")
	// ErrAlreadyUp: Up found a live topology recorded in the state file.
	ErrAlreadyUp = errors.New("a target is already up")
)

// statePrefix starts the name of the directory Up creates; Down removes only such a
// directory, whatever an edited state file says. It is not among the names proc.TempDir
// makes, so no later lockbench's sweep removes it while its servers run.
const statePrefix = "lockbench-target-"

// Up spawns topology ("" = single) detached from this process: the servers outlive it,
// run in a session of their own (a Ctrl-C in the shell does not reach them) and keep their
// directory until Down. It records them in the state file at statePath ("" =
// DefaultStatePath()), which Open then uses. A live state file is an error wrapping
// ErrAlreadyUp; a stale one (its processes gone) is replaced. An unknown topology is a
// *SpecError. Up is UpAuth without a password.
func Up(ctx context.Context, topology, statePath string) (*State, error) {
	return UpAuth(ctx, topology, statePath, Auth{})
}

// UpAuth is Up with data nodes that require auth.Password ("" = none; see
// ServerConfig.Password): runs then give it too (Spec.Auth.Password, --password). The state
// file records only that a password is required (State.RequirePass). auth.TLS, an ACL user
// other than "default" and sentinel credentials are a *SpecError, as with Open: the
// servers lockbench starts speak plain TCP on loopback and know the default user only.
func UpAuth(ctx context.Context, topology, statePath string, auth Auth) (*State, error) {
	if topology == "" {
		topology = Single
	}
	if err := (Spec{Topology: topology, Auth: auth}).check(nil, nil); err != nil {
		return nil, err
	}
	if statePath == "" {
		statePath = DefaultStatePath()
	}
	if err := canSpawn(); err != nil {
		return nil, fmt.Errorf("target up: %w", err)
	}
	if _, err := RedisServerPath(); err != nil {
		return nil, fmt.Errorf("target up: %w; install it (Debian/Ubuntu: apt-get install redis-server)", err)
	}
	switch old, err := readState(statePath); {
	case err == nil && !old.stale():
		return nil, fmt.Errorf("%w: %s since %s (state file %s); stop it with `lockbench target down`",
			ErrAlreadyUp, old.Topology, old.StartedAt.Local().Format(time.DateTime), statePath)
	case err == nil:
		old.remove() // stale: nothing of it runs any more
	case !errors.Is(err, ErrNotUp):
		return nil, fmt.Errorf("target up: %w; delete it by hand if no lockbench target runs", err)
	}

	dir, err := os.MkdirTemp("", statePrefix+topology+"-")
	if err != nil {
		return nil, fmt.Errorf("target up: %w", err)
	}
	t, err := spawn(ctx, topology, dir, true, nil, auth.Password)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	st := &State{Topology: topology, Pids: t.pids(), Dir: dir, RedisVersion: t.version,
		RequirePass: auth.Password != "", StartedAt: time.Now().UTC().Truncate(time.Second), path: statePath}
	for _, s := range t.servers {
		st.Addrs = append(st.Addrs, s.Addr)
	}
	for _, s := range t.sentinels {
		st.SentinelAddrs = append(st.SentinelAddrs, s.Addr)
	}
	if topology == Sentinel {
		st.MasterName = MasterName
	}
	if err := st.write(); err != nil {
		t.stop()
		return nil, err
	}
	return st, nil
}

// Down stops what the state file at statePath ("" = DefaultStatePath()) records and removes
// the servers' directory and the state file. A recorded pid is signalled only while its
// command line still shows that redis-server (pids get reused). No state file is an error
// wrapping ErrNotUp.
func Down(statePath string) error {
	if statePath == "" {
		statePath = DefaultStatePath()
	}
	st, err := readState(statePath)
	if err != nil {
		if errors.Is(err, ErrNotUp) {
			return err
		}
		return fmt.Errorf("target down: %w; delete it by hand after stopping its redis-server processes", err)
	}
	var errs []error
	for i, pid := range st.Pids {
		if !isRedis(pid, st.addr(i)) {
			continue
		}
		if err := killWait(pid, st.addr(i), 5*time.Second); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("target down: %w (state file %s kept)", errors.Join(errs...), statePath)
	}
	return st.remove()
}

// Status reads the state file at statePath ("" = DefaultStatePath()) and checks every
// recorded process: alive (still that redis-server) and answering ROLE. A server that
// requires a password answers NOAUTH: it counts as answering, with its role at startup.
// When none is alive the state is Stale. No state file is an error wrapping ErrNotUp.
func Status(statePath string) (*State, []NodeStatus, error) {
	if statePath == "" {
		statePath = DefaultStatePath()
	}
	st, err := readState(statePath)
	if err != nil {
		return nil, nil, err
	}
	nodes := make([]NodeStatus, len(st.Pids))
	st.Stale = true
	for i, pid := range st.Pids {
		n := NodeStatus{Role: st.role(i), Addr: st.addr(i), Pid: pid}
		if n.Alive = isRedis(pid, n.Addr); n.Alive {
			st.Stale = false
			switch role, err := askRole(n.Addr); {
			case errors.Is(err, errNoAuth):
				n.Answering, n.Error = true, "requires a password: the role shown is the one at startup"
			case err != nil:
				n.Error = err.Error()
			default:
				n.Role, n.Answering = role, true
			}
		} else {
			n.Error = "process gone"
		}
		nodes[i] = n
	}
	return st, nodes, nil
}

// readState reads a state file; a missing one is ErrNotUp.
func readState(path string) (*State, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w (no state file %s; start one with `lockbench target up`)", ErrNotUp, path)
	}
	if err != nil {
		return nil, fmt.Errorf("state file: %w", err)
	}
	var st State
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("state file %s: %w", path, err)
	}
	if st.Topology == "" || len(st.Pids) != len(st.Addrs)+len(st.SentinelAddrs) || len(st.Addrs) == 0 {
		return nil, fmt.Errorf("state file %s: not a lockbench target state (topology, addrs and pids do not match)", path)
	}
	st.Stale = false
	st.path = path
	return &st, nil
}

// write stores st at st.path atomically, and only if no state file exists (two `target up`
// racing: the second loses).
func (st *State) write() error {
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	tmp := fmt.Sprintf("%s.%d.tmp", st.path, os.Getpid())
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("write state file: %w", err)
	}
	defer os.Remove(tmp)
	if err := os.Link(tmp, st.path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%w: another `lockbench target up` wrote %s first", ErrAlreadyUp, st.path)
		}
		return fmt.Errorf("write state file: %w", err)
	}
	return nil
}

// remove deletes the servers' directory (only one Up created) and the state file.
func (st *State) remove() error {
	if st.Dir != "" && strings.HasPrefix(filepath.Base(st.Dir), statePrefix) {
		_ = os.RemoveAll(st.Dir)
	}
	if err := os.Remove(st.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove state file: %w", err)
	}
	return nil
}

// stale reports whether no recorded process is alive.
func (st *State) stale() bool {
	for i, pid := range st.Pids {
		if isRedis(pid, st.addr(i)) {
			return false
		}
	}
	return true
}

func (st *State) addr(i int) string {
	if i < len(st.Addrs) {
		return st.Addrs[i]
	}
	return st.SentinelAddrs[i-len(st.Addrs)]
}

// role is node i's role at startup.
func (st *State) role(i int) string {
	switch {
	case i >= len(st.Addrs):
		return "sentinel"
	case st.Topology == Sentinel && i > 0:
		return "replica"
	}
	return "master"
}

// isRedis reports whether pid is a live (not zombie) redis-server that serves addr: its
// command line (which redis-server rewrites to "redis-server 127.0.0.1:PORT ...") names
// redis-server and the port.
func isRedis(pid int, addr string) bool {
	if pid <= 0 {
		return false
	}
	line, err := proc.CommandLine(pid)
	if err != nil || proc.State(pid) == 'Z' {
		return false
	}
	_, port, _ := net.SplitHostPort(addr)
	return strings.Contains(line, "redis-server") && (port == "" || strings.Contains(line, port))
}

// killWait sends SIGKILL to pid and waits until it is gone (or a zombie, which holds no
// port any more and is reaped by its parent).
func killWait(pid int, addr string, timeout time.Duration) error {
	if err := proc.Kill(pid); err != nil {
		return fmt.Errorf("kill redis-server %d (%s): %w", pid, addr, err)
	}
	deadline := time.Now().Add(timeout)
	for {
		if s := proc.State(pid); s == 0 || s == 'Z' {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("redis-server %d (%s) still running %s after SIGKILL", pid, addr, timeout)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// errNoAuth: the server requires a password (NOAUTH).
var errNoAuth = errors.New("the server requires a password")

// askRole sends ROLE over a raw connection and returns the first element of the reply.
func askRole(addr string) (string, error) {
	c, err := net.DialTimeout("tcp", addr, 500*time.Millisecond)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("ROLE\r\n")); err != nil {
		return "", err
	}
	r := bufio.NewReader(c)
	head, err := r.ReadString('\n') // *N
	if err != nil {
		return "", err
	}
	if strings.HasPrefix(head, "-NOAUTH") {
		return "", errNoAuth
	}
	if !strings.HasPrefix(head, "*") {
		return "", fmt.Errorf("ROLE answered %q", strings.TrimSpace(head))
	}
	size, err := r.ReadString('\n') // $len
	if err != nil {
		return "", err
	}
	n, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(size, "$")))
	if err != nil || n < 0 || n > 64 {
		return "", fmt.Errorf("ROLE answered %q", strings.TrimSpace(head+size))
	}
	role, err := r.ReadString('\n')
	if err != nil {
		return "", err
	}
	if role = strings.TrimSpace(role); role == "slave" {
		role = "replica"
	}
	return role, nil
}
