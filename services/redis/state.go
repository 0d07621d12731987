package redis

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/lockbench/lockbench/internal/bounded"
	"github.com/lockbench/lockbench/internal/proc"
	"github.com/lockbench/lockbench/services/redis/server"
)

// DefaultStatePath is where `lockbench target up` records what it started: target.json in
// the user's own directory $XDG_STATE_HOME/lockbench (default ~/.local/state/lockbench), or
// in os.UserCacheDir()/lockbench when there is no home directory. Up creates the directory
// (0700). "" when none of them is known: the state file must then be given.
//
// Never a shared directory such as /tmp: the state file names the processes `target down`
// kills and the servers runs send their password to (see readState).
func DefaultStatePath() string {
	dir := os.Getenv("XDG_STATE_HOME")
	if !filepath.IsAbs(dir) { // the XDG spec: a relative path is invalid, ignore it
		dir = ""
		if home, err := os.UserHomeDir(); err == nil {
			dir = filepath.Join(home, ".local", "state")
		} else if cache, err := os.UserCacheDir(); err == nil {
			dir = cache
		} else {
			return ""
		}
	}
	return filepath.Join(dir, "lockbench", "target.json")
}

// resolveStatePath is path, else DefaultStatePath(); an error when neither is known.
func resolveStatePath(path string) (string, error) {
	if path == "" {
		path = DefaultStatePath()
	}
	if path == "" {
		return "", &StateError{Reason: "no home directory to keep it in ($HOME and $XDG_STATE_HOME are unset); give one with --state"}
	}
	return path, nil
}

// StateError is a state file lockbench refuses to use: one another user could have written
// (see readState), or none when there is no directory to keep it in. A usage error.
type StateError struct {
	Path   string
	Reason string
}

func (e *StateError) Error() string {
	if e.Path == "" {
		return "state file: " + e.Reason
	}
	return fmt.Sprintf("state file %s: %s", e.Path, e.Reason)
}

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
	Alive     bool   `json:"alive"`     // the pid is still the redis-server Up started
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
	statePath, err := resolveStatePath(statePath)
	if err != nil {
		return nil, err
	}
	if err := server.CanSpawn(); err != nil {
		return nil, fmt.Errorf("target up: %w", err)
	}
	if _, err := RedisServerPath(); err != nil {
		return nil, fmt.Errorf("target up: %w; install it (Debian/Ubuntu: apt-get install redis-server)", err)
	}
	switch old, err := readState(statePath); {
	case err == nil && !old.stale():
		return nil, fmt.Errorf("%w: %s since %s (state file %s); stop it with `lockbench target down%s`",
			ErrAlreadyUp, old.Topology, old.StartedAt.Local().Format(time.DateTime), statePath, stateArg(statePath))
	case err == nil:
		old.remove() // stale: nothing of it runs any more
	case !errors.Is(err, ErrNotUp):
		// Never a hint to delete it: it may be any file (--state /etc/passwd).
		return nil, err
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
// the servers' directory and the state file. A recorded pid is killed only while it is
// still the redis-server Up started: redis-server, run by this user, listening on the
// recorded port (pids get reused). One that is alive but fails a check is left running, and
// Down returns an error naming it and why; the state file is removed all the same unless a
// check could not be made (its server may still run). One gone already is skipped. No state
// file is an error wrapping ErrNotUp; one Down refuses (see readState) a *StateError.
func Down(statePath string) error {
	statePath, err := resolveStatePath(statePath)
	if err != nil {
		return err
	}
	st, err := readState(statePath)
	if err != nil {
		// Never a hint to delete it: a file lockbench cannot read as its state may be any
		// file (--state /etc/passwd).
		return err
	}
	var errs []error
	keep := false // something of it may still run
	for i, pid := range st.Pids {
		addr := st.addr(i)
		if gone(pid) {
			continue
		}
		if why, unsure := notOurRedis(pid, addr); why != "" {
			errs = append(errs, fmt.Errorf("pid %d not killed: it is not the redis-server lockbench started on %s: %s", pid, addr, why))
			keep = keep || unsure
			continue
		}
		if err := killWait(pid, addr, 5*time.Second); err != nil {
			errs = append(errs, err)
			keep = true
		}
	}
	switch {
	case keep:
		return fmt.Errorf("target down: %w (state file %s kept; delete it by hand once none of its servers runs)", errors.Join(errs...), statePath)
	case len(errs) > 0:
		if err := st.remove(); err != nil {
			errs = append(errs, err)
		}
		return fmt.Errorf("target down: %w (none of its servers runs any more: state file %s removed)", errors.Join(errs...), statePath)
	}
	return st.remove()
}

// Status reads the state file at statePath ("" = DefaultStatePath()) and checks every
// recorded process: alive (still that redis-server) and answering ROLE. A server that
// requires a password answers NOAUTH: it counts as answering, with its role at startup.
// When none is alive the state is Stale. No state file is an error wrapping ErrNotUp.
func Status(statePath string) (*State, []NodeStatus, error) {
	statePath, err := resolveStatePath(statePath)
	if err != nil {
		return nil, nil, err
	}
	st, err := readState(statePath)
	if err != nil {
		return nil, nil, err
	}
	nodes := make([]NodeStatus, len(st.Pids))
	st.Stale = true
	for i, pid := range st.Pids {
		n := NodeStatus{Role: st.role(i), Addr: st.addr(i), Pid: pid}
		if n.Alive = isOurRedis(pid, n.Addr); n.Alive {
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

// readState reads a state file; a missing one is ErrNotUp. A file another user could have
// written is a *StateError: it would choose the processes Down kills and the servers a run
// sends its password to. So is one not owned by this user, or writable by group or others
// (Unix only; see checkStateFile).
func readState(path string) (*State, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w (no state file %s; start one with `lockbench target up%s`)", ErrNotUp, path, stateArg(path))
	}
	if err != nil {
		return nil, fmt.Errorf("state file: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat() // the file read below, whatever the path names by then
	if err != nil {
		return nil, fmt.Errorf("state file: %w", err)
	}
	if why, fix := checkStateFile(fi); why != "" {
		return nil, &StateError{Path: path, Reason: why + ", and it chooses what `lockbench target down` kills and where runs send the password: refused; " + fix}
	}
	if !fi.Mode().IsRegular() {
		return nil, &StateError{Path: path, Reason: "not a regular file: not a state file of `lockbench target up`"}
	}
	b, err := io.ReadAll(io.LimitReader(f, maxStateBytes+1))
	if err != nil {
		return nil, fmt.Errorf("state file: %w", err)
	}
	notState := &StateError{Path: path, Reason: "not a state file of `lockbench target up`"}
	if len(b) > maxStateBytes {
		notState.Reason = "larger than " + bounded.Size(maxStateBytes) + ": " + notState.Reason
		return nil, notState
	}
	var st State
	if err := json.Unmarshal(b, &st); err != nil {
		notState.Reason += " (not its JSON)"
		return nil, notState
	}
	if st.Topology == "" || len(st.Pids) != len(st.Addrs)+len(st.SentinelAddrs) || len(st.Addrs) == 0 {
		notState.Reason += " (its topology, addrs and pids do not match)"
		return nil, notState
	}
	st.Stale = false
	st.path = path
	return &st, nil
}

// maxStateBytes bounds what readState reads: a state file names a few servers.
const maxStateBytes = 64 << 10

// stateArg is " --state PATH" for a command line a message suggests, "" when path is the
// default one (the user gave none).
func stateArg(path string) string {
	if path == DefaultStatePath() {
		return ""
	}
	if strings.ContainsAny(path, " \t\n'\"$`\\*?[]{}();&|<>~#!") {
		path = "'" + strings.ReplaceAll(path, "'", `'\''`) + "'"
	}
	return " --state " + path
}

// write stores st at st.path (0600, in a directory it creates 0700) atomically, and only if
// no state file exists (two `target up` racing: the second loses).
func (st *State) write() error {
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(st.path), 0o700); err != nil {
		return fmt.Errorf("write state file: %w", err)
	}
	// A new file (O_EXCL): one left by someone else would keep its owner and mode.
	tmp := fmt.Sprintf("%s.%d.tmp", st.path, os.Getpid())
	_ = os.Remove(tmp)
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("write state file: %w", err)
	}
	defer os.Remove(tmp)
	_, err = f.Write(append(b, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write state file: %w", err)
	}
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

// stale reports whether none of the recorded redis-server processes runs any more.
func (st *State) stale() bool {
	for i, pid := range st.Pids {
		if isOurRedis(pid, st.addr(i)) {
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

// gone reports whether pid no longer runs: no such process, or a zombie (it holds no port
// any more; its parent reaps it).
func gone(pid int) bool {
	s := proc.State(pid)
	return pid <= 0 || s == 0 || s == 'Z'
}

// notOurRedis says why pid is not the redis-server Up started to serve addr, "" when it is:
// it runs redis-server (whose title, "redis-server 127.0.0.1:PORT [sentinel]", names the
// program), as this user, and listens on addr's port. Pids get reused: a recorded pid may
// now run anything. unsure is set when a check could not be made: it may be ours.
func notOurRedis(pid int, addr string) (why string, unsure bool) {
	if gone(pid) {
		return "the process is gone", false
	}
	line, err := proc.CommandLine(pid)
	if err != nil {
		return fmt.Sprintf("cannot tell what it runs (%v)", err), true
	}
	line = strings.TrimSpace(strings.ReplaceAll(line, "\x00", " "))
	if prog, _, _ := strings.Cut(line, " "); filepath.Base(prog) != "redis-server" {
		if len(line) > 60 {
			line = line[:60] + "..."
		}
		return fmt.Sprintf("it runs %q", line), false
	}
	if uid, err := proc.Owner(pid); err != nil {
		return fmt.Sprintf("cannot tell its user (%v)", err), true
	} else if uid != os.Getuid() {
		return fmt.Sprintf("it runs as uid %d, not as this user (uid %d)", uid, os.Getuid()), false
	}
	_, p, _ := net.SplitHostPort(addr)
	port, err := strconv.Atoi(p)
	if err != nil {
		return fmt.Sprintf("the state file's address %q has no port", addr), false
	}
	switch ok, err := proc.ListensTCP(pid, port); {
	case err != nil:
		return fmt.Sprintf("cannot tell whether it listens on port %d (%v)", port, err), true
	case !ok:
		return fmt.Sprintf("it does not listen on port %d", port), false
	}
	return "", false
}

// isOurRedis reports whether pid is the redis-server Up started to serve addr.
func isOurRedis(pid int, addr string) bool {
	why, _ := notOurRedis(pid, addr)
	return why == ""
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
