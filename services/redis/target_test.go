package redis_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/lockbench/lockbench/internal/redistest"
	"github.com/lockbench/lockbench/services/redis"
)

// The test binary doubles as the helper process of the signal and `target up` tests: the
// helper opens or ups a topology the way the CLI does and reports what it started on stdout.
const helperEnv = "LOCKBENCH_TARGET_HELPER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(helper(mode))
	}
	os.Exit(m.Run())
}

// helperReport is the helper's one line of JSON on stdout.
type helperReport struct {
	Pids  []int  `json:"pids"`
	Dir   string `json:"dir"` // the topology's temporary directory
	Error string `json:"error,omitempty"`
	// Children counts redis-server processes still parented by the helper after a failed
	// Open: it must be 0.
	Children int `json:"children"`
}

func helper(mode string) int {
	topology, statePath := os.Getenv("HELPER_TOPOLOGY"), os.Getenv("HELPER_STATE")
	out := json.NewEncoder(os.Stdout)
	switch mode {
	case "open": // as `lockbench run` does: Close on SIGINT/SIGTERM
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		conn, err := redis.Open(ctx, redis.Spec{Topology: topology, StatePath: statePath})
		if err != nil {
			_ = out.Encode(helperReport{Error: err.Error()})
			return 1
		}
		defer conn.Close()
		// redis-server runs in <dir>/node-0.
		cwd, _ := os.Readlink(fmt.Sprintf("/proc/%d/cwd", conn.Servers[0].Pid()))
		_ = out.Encode(helperReport{Pids: pids(conn), Dir: filepath.Dir(cwd)})
		<-ctx.Done()
		return 0
	case "fail": // Open gives up half-way through a cluster's startup
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		conn, err := redis.Open(ctx, redis.Spec{Topology: redis.Cluster, StatePath: statePath})
		if err == nil {
			conn.Close()
			_ = out.Encode(helperReport{Error: "Open succeeded within 300ms"})
			return 1
		}
		_ = out.Encode(helperReport{Error: err.Error(), Children: redisChildren(os.Getpid())})
		return 0
	case "run": // a run of a strategy on --redis, until killed (runs_test.go)
		return runHelper()
	case "up": // as `lockbench target up` does: start and exit
		st, err := redis.Up(context.Background(), topology, statePath)
		if err != nil {
			_ = out.Encode(helperReport{Error: err.Error()})
			return 1
		}
		_ = out.Encode(helperReport{Pids: st.Pids})
		return 0
	}
	return 2
}

// startHelper runs the helper in mode and returns it with its report.
func startHelper(t *testing.T, mode, topology, statePath string) (*exec.Cmd, helperReport) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+mode, "HELPER_TOPOLOGY="+topology, "HELPER_STATE="+statePath)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadBytes('\n')
	if err != nil {
		t.Fatalf("helper %s: no report: %v", mode, err)
	}
	var r helperReport
	if err := json.Unmarshal(line, &r); err != nil {
		t.Fatalf("helper %s: report %q: %v", mode, line, err)
	}
	return cmd, r
}

// pids lists every spawned process of conn.
func pids(c *redis.Conn) []int {
	var out []int
	for _, s := range append(slices.Clone(c.Servers), c.Sentinels...) {
		out = append(out, s.Pid())
	}
	return out
}

// gone reports whether pid no longer runs: no such process, or a zombie (it holds no port
// any more; its parent reaps it).
func gone(pid int) bool {
	s := redis.ProcessState(pid)
	return s == 0 || s == 'Z'
}

// requireGone fails t unless every pid is gone within d.
func requireGone(t *testing.T, pids []int, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for _, pid := range pids {
		for !gone(pid) {
			if time.Now().After(deadline) {
				t.Fatalf("redis-server pid %d still running %s later", pid, d)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// redisChildren counts the live redis-server processes whose parent is ppid.
func redisChildren(ppid int) int {
	entries, _ := os.ReadDir("/proc")
	n := 0
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(f) > 1 && f[1] == strconv.Itoa(ppid) && !gone(pid) {
			if cmd, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline")); strings.Contains(string(cmd), "redis-server") {
				n++
			}
		}
	}
	return n
}

func open(t *testing.T, s redis.Spec) *redis.Conn {
	t.Helper()
	if s.StatePath == "" {
		s.StatePath = filepath.Join(t.TempDir(), "none.json") // never a `target up` of another test
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	c, err := redis.Open(ctx, s)
	if err != nil {
		t.Fatalf("Open(%+v): %v", s, err)
	}
	t.Logf("Open %q: %s in %s, addrs %v, sentinels %v", s.Topology, c.Mode, time.Since(start).Round(time.Millisecond), c.Addrs, c.SentinelAddrs)
	t.Cleanup(c.Close)
	return c
}

func plainClient(t *testing.T, addr string) rueidis.Client {
	t.Helper()
	opt := redis.ClientOption(addr)
	opt.ForceSingleClient = true
	c, err := rueidis.NewClient(opt)
	if err != nil {
		t.Fatalf("connect %s: %v", addr, err)
	}
	t.Cleanup(c.Close)
	return c
}

func do(t *testing.T, c rueidis.Client, cmd rueidis.Completed) rueidis.RedisResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return c.Do(ctx, cmd)
}

func setGet(t *testing.T, c rueidis.Client, key string) {
	t.Helper()
	if err := do(t, c, c.B().Set().Key(key).Value("v-"+key).Build()).Error(); err != nil {
		t.Fatalf("SET %s: %v", key, err)
	}
	if v, err := do(t, c, c.B().Get().Key(key).Build()).ToString(); err != nil || v != "v-"+key {
		t.Fatalf("GET %s = %q, %v", key, v, err)
	}
}

func TestSpawnedTopologies(t *testing.T) {
	redistest.Require(t)
	checks := map[string]func(t *testing.T, c *redis.Conn){
		redis.Single: func(t *testing.T, c *redis.Conn) {
			if len(c.Servers) != 1 || len(c.Addrs) != 1 || c.Nodes != nil || c.Client.Mode() != rueidis.ClientModeStandalone {
				t.Fatalf("single: %d servers, addrs %v, %d nodes, mode %s", len(c.Servers), c.Addrs, len(c.Nodes), c.Client.Mode())
			}
		},
		redis.Redlock: func(t *testing.T, c *redis.Conn) {
			if len(c.Servers) != 5 || len(c.Nodes) != 5 || c.Client != c.Nodes[0] {
				t.Fatalf("redlock: %d servers, %d nodes", len(c.Servers), len(c.Nodes))
			}
			seen := map[string]bool{}
			for i, n := range c.Nodes {
				seen[c.Servers[i].Addr] = true
				for addr := range n.Nodes() {
					if addr != c.Servers[i].Addr {
						t.Fatalf("Nodes[%d] talks to %s, Servers[%d] is %s", i, addr, i, c.Servers[i].Addr)
					}
				}
				// Independent masters: what one holds, the others do not.
				setGet(t, n, "only-on-"+strconv.Itoa(i))
			}
			if len(seen) != 5 {
				t.Fatalf("redlock masters are not distinct: %v", c.Addrs)
			}
			if n, err := do(t, c.Nodes[1], c.Nodes[1].B().Exists().Key("only-on-0").Build()).AsInt64(); err != nil || n != 0 {
				t.Fatalf("a key set on master 0 exists on master 1: %d, %v", n, err)
			}
		},
		redis.Sentinel: func(t *testing.T, c *redis.Conn) {
			if len(c.Servers) != 2 || len(c.Sentinels) != 3 || len(c.SentinelAddrs) != 3 || c.MasterName != redis.MasterName {
				t.Fatalf("sentinel: %d servers, %d sentinels, master name %q", len(c.Servers), len(c.Sentinels), c.MasterName)
			}
			if c.Client.Mode() != rueidis.ClientModeSentinel {
				t.Fatalf("client mode %s, want sentinel", c.Client.Mode())
			}
			if nodes := redis.Nodes(c.Client); len(nodes) != 1 || nodes[0].Addr != c.Servers[0].Addr {
				t.Fatalf("the client writes to %v, want the master %s", nodes, c.Servers[0].Addr)
			}
			setGet(t, c.Client, "replicated")
			replica := plainClient(t, c.Servers[1].Addr)
			deadline := time.Now().Add(5 * time.Second)
			for {
				v, err := do(t, replica, replica.B().Get().Key("replicated").Build()).ToString()
				if err == nil && v == "v-replicated" {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the replica did not receive the write: %q, %v", v, err)
				}
				time.Sleep(10 * time.Millisecond)
			}
		},
		redis.Cluster: func(t *testing.T, c *redis.Conn) {
			if len(c.Servers) != 3 || c.Client.Mode() != rueidis.ClientModeCluster || len(c.Client.Nodes()) != 3 {
				t.Fatalf("cluster: %d servers, mode %s, %d nodes", len(c.Servers), c.Client.Mode(), len(c.Client.Nodes()))
			}
			for i := range 30 {
				setGet(t, c.Client, "k"+strconv.Itoa(i)) // 30 keys: every third of the slots gets some
			}
			for _, n := range redis.Nodes(c.Client) {
				if k, err := do(t, n.Client, n.Client.B().Dbsize().Build()).AsInt64(); err != nil || k == 0 {
					t.Fatalf("node %s holds %d keys (%v): the slots are not spread", n.Addr, k, err)
				}
			}
		},
	}
	for _, topo := range redis.Topologies() {
		t.Run(topo, func(t *testing.T) {
			t.Parallel()
			c := open(t, redis.Spec{Topology: topo})
			if c.Mode != "spawned" || c.Topology != topo || c.RedisVersion == "" {
				t.Fatalf("mode %q topology %q version %q", c.Mode, c.Topology, c.RedisVersion)
			}
			if c.Note != "" {
				t.Fatalf("unexpected note %q", c.Note)
			}
			for i, s := range c.Servers {
				if c.Addrs[i] != s.Addr {
					t.Fatalf("Addrs[%d] = %s, Servers[%d].Addr = %s", i, c.Addrs[i], i, s.Addr)
				}
			}
			setGet(t, c.Client, "{lock:1}:owner")
			checks[topo](t, c)
			// The engine measures cost with INFO on every node.
			nodes := redis.Nodes(append([]rueidis.Client{c.Client}, c.Nodes...)...)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if st, err := redis.Snapshot(ctx, nodes); err != nil || st[0].Commands == 0 {
				t.Fatalf("Snapshot: %+v, %v", st, err)
			}

			all := pids(c)
			if slices.Contains(all, 0) {
				t.Fatalf("a spawned process is not running: %v", all)
			}
			c.Close()
			requireGone(t, all, 0)
		})
	}
}

func TestSentinelFailover(t *testing.T) {
	redistest.Require(t)
	t.Parallel()
	c := open(t, redis.Spec{Topology: redis.Sentinel})
	setGet(t, c.Client, "before")
	// Replication is asynchronous: a write acknowledged just before the master dies may be
	// lost. Wait until the replica has it.
	killed := failOver(t, c)
	t.Logf("the client wrote to the promoted replica %s after %s", c.Servers[1].Addr, time.Since(killed).Round(time.Millisecond))
	if v, err := do(t, c.Client, c.Client.B().Get().Key("before").Build()).ToString(); err != nil || v != "v-before" {
		t.Fatalf("a write made before the failover is lost: %q, %v", v, err)
	}
}

// TestNoLeakAfterSignal: a process that spawned a topology and is interrupted (and closes
// on the signal, as the CLI does) or killed outright leaves no redis-server behind.
func TestNoLeakAfterSignal(t *testing.T) {
	redistest.Require(t)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			cmd, r := startHelper(t, "open", redis.Redlock, filepath.Join(t.TempDir(), "none.json"))
			if r.Error != "" || len(r.Pids) != 5 {
				t.Fatalf("helper: %+v", r)
			}
			for _, pid := range r.Pids {
				if gone(pid) {
					t.Fatalf("pid %d is not running before the signal", pid)
				}
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			_ = cmd.Wait()
			requireGone(t, r.Pids, 3*time.Second)
			// The directory goes with Close; after a SIGKILL, with the next process's sweep —
			// which may be another lockbench's, started meanwhile by a test of another package
			// running at the same time: then it is gone already.
			if sig == syscall.SIGKILL {
				if _, err := os.Stat(r.Dir); err != nil && !errors.Is(err, os.ErrNotExist) {
					t.Fatalf("directory of a killed process: %v", err)
				}
				redis.SweepTempDirs(filepath.Dir(r.Dir))
			}
			if _, err := os.Stat(r.Dir); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("directory %s left behind: %v", r.Dir, err)
			}
		})
	}
	t.Run("failed start", func(t *testing.T) {
		t.Parallel()
		_, r := startHelper(t, "fail", "", filepath.Join(t.TempDir(), "none.json"))
		if r.Error == "" || r.Children != 0 {
			t.Fatalf("Open that gives up half-way: %+v, want an error and no redis-server left", r)
		}
		t.Logf("Open cancelled during cluster startup: %s", r.Error)
	})
}

func TestUpStatusDown(t *testing.T) {
	redistest.Require(t)
	t.Parallel()
	statePath := filepath.Join(t.TempDir(), "state.json")
	t.Cleanup(func() { _ = redis.Down(statePath) })

	// `target up` starts the servers and exits; they outlive it.
	cmd, r := startHelper(t, "up", redis.Redlock, statePath)
	if r.Error != "" || len(r.Pids) != 5 {
		t.Fatalf("up: %+v", r)
	}
	_ = cmd.Wait()
	st, nodes, err := redis.Status(statePath)
	if err != nil {
		t.Fatalf("Status: %v", err)
	}
	if st.Stale || st.Topology != redis.Redlock || len(nodes) != 5 || st.RedisVersion == "" || st.StartedAt.IsZero() {
		t.Fatalf("Status: %+v %+v", st, nodes)
	}
	for _, n := range nodes {
		if !n.Alive || !n.Answering || n.Role != "master" {
			t.Fatalf("node after its `target up` exited: %+v", n)
		}
		if sid := session(t, n.Pid); sid != n.Pid {
			t.Fatalf("pid %d runs in session %d, want a session of its own", n.Pid, sid)
		}
	}
	if _, err := os.Stat(st.Dir); err != nil {
		t.Fatalf("the servers' directory: %v", err)
	}

	// A second up is refused and says how to stop the first.
	if _, err := redis.Up(context.Background(), redis.Single, statePath); !errors.Is(err, redis.ErrAlreadyUp) || !strings.Contains(err.Error(), "target down") {
		t.Fatalf("second Up: %v", err)
	}

	// Open uses it, and its Close leaves it running.
	c := open(t, redis.Spec{StatePath: statePath, Need: redis.Redlock})
	if c.Mode != "spawned" || c.Topology != redis.Redlock || !slices.Equal(c.Addrs, st.Addrs) || len(c.Nodes) != 5 || c.Servers != nil {
		t.Fatalf("Open on a `target up` state: %+v", c)
	}
	setGet(t, c.Client, "k")
	c.Close()
	for _, pid := range st.Pids {
		if gone(pid) {
			t.Fatalf("Conn.Close stopped pid %d, which belongs to `target down`", pid)
		}
	}
	// A topology the state cannot serve is a usage error.
	var se *redis.SpecError
	if _, err := redis.Open(context.Background(), redis.Spec{StatePath: statePath, Topology: redis.Cluster}); !errors.As(err, &se) {
		t.Fatalf("Open --topology cluster against a redlock `target up`: %v", err)
	}

	if err := redis.Down(statePath); err != nil {
		t.Fatalf("Down: %v", err)
	}
	requireGone(t, st.Pids, 0)
	if _, err := os.Stat(statePath); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("state file after Down: %v", err)
	}
	if _, err := os.Stat(st.Dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("servers' directory after Down: %v", err)
	}
	if _, _, err := redis.Status(statePath); !errors.Is(err, redis.ErrNotUp) {
		t.Fatalf("Status after Down: %v", err)
	}
	if err := redis.Down(statePath); !errors.Is(err, redis.ErrNotUp) {
		t.Fatalf("Down twice: %v", err)
	}
}

func TestStaleState(t *testing.T) {
	redistest.Require(t)
	t.Parallel()
	statePath := filepath.Join(t.TempDir(), "state.json")
	t.Cleanup(func() { _ = redis.Down(statePath) })
	st, err := redis.Up(context.Background(), "", statePath)
	if err != nil {
		t.Fatalf("Up: %v", err)
	}
	if st.Topology != redis.Single || len(st.Pids) != 1 {
		t.Fatalf("Up: %+v", st)
	}
	for _, pid := range st.Pids {
		if p, err := os.FindProcess(pid); err == nil {
			_ = p.Kill() // the machine rebooted, say
		}
	}
	requireGone(t, st.Pids, 3*time.Second)

	st2, nodes, err := redis.Status(statePath)
	if err != nil || !st2.Stale || nodes[0].Alive || nodes[0].Answering {
		t.Fatalf("Status of a stale state: %+v %+v %v", st2, nodes, err)
	}
	c := open(t, redis.Spec{StatePath: statePath})
	if c.Mode != "spawned" || len(c.Servers) != 1 || !strings.Contains(c.Note, "stale") {
		t.Fatalf("Open with a stale state file: mode %s, %d servers, note %q", c.Mode, len(c.Servers), c.Note)
	}
	setGet(t, c.Client, "k")
	// Up replaces a stale state.
	st3, err := redis.Up(context.Background(), redis.Single, statePath)
	if err != nil {
		t.Fatalf("Up over a stale state: %v", err)
	}
	if err := redis.Down(statePath); err != nil {
		t.Fatalf("Down: %v", err)
	}
	requireGone(t, st3.Pids, 0)
}

// session is the session id of pid (/proc/<pid>/stat field 6).
func session(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	sid, _ := strconv.Atoi(f[3])
	return sid
}

func TestSpecErrors(t *testing.T) {
	redistest.Require(t)
	t.Parallel()
	single := redistest.Start(t, 1)[0].Addr
	two := []string{}
	for _, s := range redistest.Start(t, 2) {
		two = append(two, s.Addr)
	}
	cases := []struct {
		name  string
		spec  redis.Spec
		field string // of the *SpecError; "" = an *AddrError
		want  string // in the message
	}{
		{"unknown topology", redis.Spec{Topology: "nope"}, "topology", "valid: single, redlock, sentinel, cluster"},
		{"cluster with --redis", redis.Spec{Topology: redis.Cluster, Redis: []string{single}}, "topology", "is a single server; an external target's topology is what it is"},
		{"sentinel with --redis", redis.Spec{Topology: redis.Sentinel, Redis: []string{single}}, "topology", "--sentinel"},
		{"redlock need, single external", redis.Spec{Need: redis.Redlock, Redis: []string{single}}, "redis", "pass several --redis addresses"},
		{"redlock need, two external", redis.Spec{Need: redis.Redlock, Redis: two}, "redis", "odd number"},
		{"redlock need, --topology single", redis.Spec{Need: redis.Redlock, Topology: redis.Single}, "topology", "drop redlock from --strategy"},
		{"same server twice", redis.Spec{Redis: []string{single, "localhost:" + single[strings.LastIndexByte(single, ':')+1:]}}, "redis", "are the same server"},
		{"duplicate address", redis.Spec{Redis: []string{single, single, single}}, "redis", "twice"},
		{"sentinel without master", redis.Spec{Sentinels: []string{single}}, "master", "required with --sentinel"},
		{"master without sentinel", redis.Spec{Master: "m"}, "master", "--sentinel"},
		{"redis and sentinel", redis.Spec{Redis: []string{single}, Sentinels: []string{single}, Master: "m"}, "sentinel", "not both"},
		{"bad address", redis.Spec{Redis: []string{"localhost"}}, "", "host:port"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.spec.StatePath = filepath.Join(t.TempDir(), "none.json")
			c, err := redis.Open(context.Background(), tc.spec)
			if err == nil {
				c.Close()
				t.Fatal("Open succeeded")
			}
			var se *redis.SpecError
			var ae *redis.AddrError
			switch {
			case tc.field == "" && !errors.As(err, &ae):
				t.Fatalf("want an *AddrError, got %T: %v", err, err)
			case tc.field != "" && (!errors.As(err, &se) || se.Field != tc.field):
				t.Fatalf("want a *SpecError on --%s, got %T: %v", tc.field, err, err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("message %q lacks %q", err, tc.want)
			}
			t.Log(err)
		})
	}
	// A --topology that matches what the external target is passes.
	c := open(t, redis.Spec{Topology: redis.Single, Redis: []string{single}})
	if c.Mode != "external" || c.Topology != redis.Single {
		t.Fatalf("external single: %+v", c)
	}
	// Unreachable is not a usage error.
	_, err := redis.Open(context.Background(), redis.Spec{Redis: []string{"127.0.0.1:1"}, ConnectTimeout: 200 * time.Millisecond})
	var ue *redis.UnreachableError
	if !errors.As(err, &ue) {
		t.Fatalf("unreachable: %T %v", err, err)
	}
}

// TestDialRewrite: Spec.Dial sees every connection, including the ones a sentinel client
// makes to the master it learns about.
func TestDialRewrite(t *testing.T) {
	redistest.Require(t)
	t.Parallel()
	c := open(t, redis.Spec{Topology: redis.Sentinel})
	seen := make(chan string, 100)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ext, err := redis.Open(ctx, redis.Spec{Sentinels: c.SentinelAddrs, Master: c.MasterName,
		Dial: func(addr string) string {
			select {
			case seen <- addr:
			default:
			}
			return addr
		}})
	if err != nil {
		t.Fatalf("Open --sentinel: %v", err)
	}
	defer ext.Close()
	if ext.Mode != "external" || ext.Topology != redis.Sentinel || !slices.Equal(ext.Addrs, c.Addrs[:1]) {
		t.Fatalf("external sentinel: %+v", ext)
	}
	setGet(t, ext.Client, "k")
	dialed := map[string]bool{}
	for len(seen) > 0 {
		dialed[<-seen] = true
	}
	if !dialed[c.Servers[0].Addr] || !dialed[c.SentinelAddrs[0]] && !dialed[c.SentinelAddrs[1]] && !dialed[c.SentinelAddrs[2]] {
		t.Fatalf("Dial saw %v; want the master %s and a sentinel", dialed, c.Servers[0].Addr)
	}
}

// TestServerSurvivesItsStartingThread: the parent-death signal fires when the thread that
// started the child ends; servers started from goroutines whose locked threads then end
// must keep running. (Three of them: one may run on the main thread, which never ends.)
func TestServerSurvivesItsStartingThread(t *testing.T) {
	redistest.Require(t)
	t.Parallel()
	const n = 3
	started := make(chan *redis.Server, n)
	threads := make(chan int, n)
	for range n {
		go func() {
			runtime.LockOSThread() // never unlocked: Go ends this thread when the goroutine returns
			threads <- threadID()
			s, err := redis.StartServer(context.Background(), redis.ServerConfig{})
			if err != nil {
				t.Error(err)
			}
			started <- s
		}()
	}
	var servers []*redis.Server
	for range n {
		if s := <-started; s != nil {
			t.Cleanup(s.Stop)
			servers = append(servers, s)
		}
	}
	// The starting threads end (the main thread, if one ran there, never does); then each
	// server answers a PING: a parent-death signal sent as its thread ended would have
	// killed it before it could.
	for range n {
		tid := <-threads
		if tid == 0 || tid == os.Getpid() {
			continue
		}
		task := fmt.Sprintf("/proc/self/task/%d", tid)
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
			if _, err := os.Stat(task); errors.Is(err, os.ErrNotExist) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("thread %d did not end within 30s of its goroutine", tid)
			}
		}
	}
	for _, s := range servers {
		c := plainClient(t, s.Addr)
		if err := do(t, c, c.B().Ping().Build()).Error(); err != nil || !s.Running() {
			t.Fatalf("redis-server %s died with the thread that started it: PING %v", s.Addr, err)
		}
	}
}

// failOver waits until the replica has every write, kills the spawned sentinel topology's
// master and waits until a write through c's client lands on the promoted replica; it
// returns when the master was killed.
func failOver(t *testing.T, c *redis.Conn) time.Time {
	t.Helper()
	if n, err := do(t, c.Client, c.Client.B().Wait().Numreplicas(1).Timeout(2000).Build()).AsInt64(); err != nil || n != 1 {
		t.Fatalf("WAIT 1: %d, %v", n, err)
	}
	killed := time.Now()
	c.Servers[0].Kill()
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		err := c.Client.Do(ctx, c.Client.B().Set().Key("after").Value("1").Build()).Error()
		cancel()
		nodes := redis.Nodes(c.Client)
		if err == nil && len(nodes) == 1 && nodes[0].Addr == c.Servers[1].Addr {
			break
		}
		if time.Since(killed) > 10*time.Second {
			t.Fatalf("no write reached the promoted replica within 10s: %v (client on %v)", err, nodes)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return killed
}
