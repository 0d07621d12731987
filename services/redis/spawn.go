package redis

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/rueidis"

	"github.com/lockbench/lockbench/internal/proc"
	"github.com/lockbench/lockbench/services/redis/server"
)

// Topology names, as --topology spells them.
const (
	Single   = "single"   // one master
	Redlock  = "redlock"  // five independent masters
	Sentinel = "sentinel" // a master, one replica and three sentinels
	Cluster  = "cluster"  // a Redis Cluster of three masters
)

// Topologies lists the valid --topology values.
func Topologies() []string { return []string{Single, Redlock, Sentinel, Cluster} }

// Each topology spawns into a temporary directory of its name, swept once its owner dies.
func init() { proc.RegisterTempNames(Topologies()...) }

// MasterName is the sentinel master set name of a spawned sentinel topology.
const MasterName = "lockbench"

// Spawned topology settings. Failover timing is short so that a failover test finishes in
// seconds: a master that does not answer for sentinelDownAfter is subjectively down; with the
// quorum of 2 sentinels agreeing it is objectively down and a failover starts.
const (
	redlockMasters     = 5
	clusterMasters     = 3
	sentinelCount      = 3
	sentinelQuorum     = 2
	sentinelDownAfter  = 1000 // ms
	sentinelFailover   = 3000 // ms, failover-timeout
	clusterNodeTimeout = 2000 // ms
	// convergeTimeout bounds the wait for replication, sentinels and cluster to settle.
	convergeTimeout = 20 * time.Second
)

// topology is a started set of redis-server processes in one directory.
type topology struct {
	name      string
	dir       string
	servers   []*Server // data nodes, in Conn.Servers order
	sentinels []*Server
	version   string
	detached  bool
	stopOnce  sync.Once

	// via, when set, is the address through which the replica and the sentinels reach the
	// initial master (see Spec.ReplicationVia); viaMaster is that master's own address.
	via, viaMaster string
	// password, when set, is what the data nodes require (see ServerConfig.Password); the
	// sentinels know it (auth-pass) but require none themselves.
	password string
}

// spawn starts the named topology in dir (a new temporary directory when ""), its data
// nodes requiring password when it is set. On error every process it started is stopped
// and the directory removed.
func spawn(ctx context.Context, name, dir string, detached bool, via func(string) (string, error), password string) (*topology, error) {
	if err := server.CanSpawn(); err != nil {
		return nil, fmt.Errorf("spawn %s topology: %w", name, err)
	}
	bin, err := RedisServerPath()
	if err != nil {
		return nil, err
	}
	if dir == "" {
		if dir, err = server.MakeTempDir(name); err != nil {
			return nil, fmt.Errorf("spawn %s: %w", name, err)
		}
	}
	t := &topology{name: name, dir: dir, detached: detached, password: password}
	base := ServerConfig{Binary: bin, Detached: detached, Password: password}
	switch name {
	case Single:
		err = t.startData(ctx, base, 1)
	case Redlock:
		err = t.startData(ctx, base, redlockMasters)
	case Sentinel:
		err = t.startSentinel(ctx, base, via)
	case Cluster:
		err = t.startCluster(ctx, base)
	default:
		err = &SpecError{Field: "topology", Value: name, Reason: "unknown topology; valid: " + strings.Join(Topologies(), ", ")}
	}
	if err != nil {
		t.stop()
		return nil, fmt.Errorf("spawn %s topology: %w", name, err)
	}
	t.version = version(ctx, t.servers[0].Addr, t.password)
	return t, nil
}

// startData starts n more data nodes, concurrently.
func (t *topology) startData(ctx context.Context, cfg ServerConfig, n int, args ...string) error {
	cfgs := make([]ServerConfig, n)
	for i := range cfgs {
		cfgs[i] = cfg
		cfgs[i].Dir = filepath.Join(t.dir, "node-"+strconv.Itoa(len(t.servers)+i))
		cfgs[i].Args = args
	}
	s, err := startAll(ctx, cfgs)
	t.servers = append(t.servers, s...)
	return err
}

// startAll starts one server per configuration, concurrently, creating their directories.
// It returns every server that started, even when another failed.
func startAll(ctx context.Context, cfgs []ServerConfig) ([]*Server, error) {
	out := make([]*Server, len(cfgs))
	errs := make([]error, len(cfgs))
	var wg sync.WaitGroup
	for i, c := range cfgs {
		wg.Go(func() {
			if err := os.MkdirAll(c.Dir, 0o700); err != nil {
				errs[i] = err
				return
			}
			out[i], errs[i] = StartServer(ctx, c)
		})
	}
	wg.Wait()
	started := out[:0]
	for _, s := range out {
		if s != nil {
			started = append(started, s)
		}
	}
	return started, errors.Join(errs...)
}

// startSentinel starts a master, its replica, and three sentinels that monitor the master
// and know the replica, then waits until the replica is in sync and every sentinel sees
// the replica and the two other sentinels, so that a failover can happen right away.
func (t *topology) startSentinel(ctx context.Context, base ServerConfig, via func(string) (string, error)) error {
	// A replica's first full sync waits repl-diskless-sync-delay (5 s by default) for more
	// replicas to join it; both nodes may become master.
	nodeArgs := []string{"--repl-diskless-sync-delay", "0"}
	if err := t.startData(ctx, base, 1, nodeArgs...); err != nil {
		return err
	}
	master := t.servers[0]
	// The master as the replica and the sentinels know it. With via, both reach it through
	// that address (a proxy that can delay replication): were only the replica to use it,
	// the sentinels would see it following "another" master and repoint it
	// (+fix-slave-config). lockbench's own clients map the address back (connect).
	host, port := "127.0.0.1", master.Port
	if via != nil {
		addr, err := via(master.Addr)
		if err != nil {
			return fmt.Errorf("replication proxy: %w", err)
		}
		h, p, err := net.SplitHostPort(addr)
		if err != nil {
			return fmt.Errorf("replication proxy address %q: %w", addr, err)
		}
		host, port = h, atoiOr(p, 0)
		t.via, t.viaMaster = addr, master.Addr
	}
	if err := t.startData(ctx, base, 1, append(nodeArgs, "--replicaof", host, strconv.Itoa(port))...); err != nil {
		return err
	}
	replica := t.servers[1]
	if err := converge(ctx, "replica "+replica.Addr+" in sync with "+master.Addr, replica.Addr, t.password, replicaInSync); err != nil {
		return err
	}

	conf := fmt.Sprintf("sentinel monitor %[1]s %[7]s %[2]d %[3]d\n"+
		"sentinel down-after-milliseconds %[1]s %[4]d\n"+
		"sentinel failover-timeout %[1]s %[5]d\n"+
		"sentinel parallel-syncs %[1]s 1\n"+
		"sentinel known-replica %[1]s 127.0.0.1 %[6]d\n",
		MasterName, port, sentinelQuorum, sentinelDownAfter, sentinelFailover, replica.Port, host)
	if t.password != "" {
		// The sentinels authenticate to the master and the replica with it; they require
		// no password themselves.
		conf += fmt.Sprintf("sentinel auth-pass %s %s\n", MasterName, server.ConfQuote(t.password))
	}
	sentinelBase := base
	sentinelBase.Password = ""
	if err := t.startSentinels(ctx, sentinelBase, conf); err != nil {
		return err
	}
	return convergeAll(ctx, t.sentinels, "", "sentinel %s to see the master, its replica and the other sentinels", sentinelReady)
}

// startSentinels starts the sentinels with ports and ids chosen up front, so that each
// one's configuration can name the others (known-sentinel): left to find each other through
// hello messages on the master, they would need 2 s more. A port another process takes
// between the choice and the start fails that start; the whole set is tried again then.
func (t *topology) startSentinels(ctx context.Context, base ServerConfig, conf string) error {
	var err error
	for range 3 {
		ports := make([]int, sentinelCount)
		ids := make([]string, sentinelCount)
		for i := range ports {
			if ports[i], err = proc.FreePort(); err != nil {
				return err
			}
			id := make([]byte, 20) // a sentinel id is 40 hex digits
			_, _ = rand.Read(id)   // never fails (crypto/rand, Go ≥ 1.24)
			ids[i] = hex.EncodeToString(id)
		}
		if len(ports) != len(slices.Compact(slices.Sorted(slices.Values(ports)))) {
			err = errors.New("the same free port was picked twice")
			continue
		}
		cfgs := make([]ServerConfig, sentinelCount)
		for i := range cfgs {
			var b strings.Builder
			b.WriteString(conf)
			fmt.Fprintf(&b, "sentinel myid %s\n", ids[i])
			for j := range cfgs {
				if j != i {
					fmt.Fprintf(&b, "sentinel known-sentinel %s 127.0.0.1 %d %s\n", MasterName, ports[j], ids[j])
				}
			}
			cfgs[i] = base
			cfgs[i].Port = ports[i]
			cfgs[i].Sentinel = b.String()
			cfgs[i].Dir = filepath.Join(t.dir, fmt.Sprintf("sentinel-%d", i))
		}
		var s []*Server
		s, err = startAll(ctx, cfgs)
		if err == nil {
			t.sentinels = s
			return nil
		}
		for _, sn := range s {
			sn.Stop()
		}
		if ctx.Err() != nil {
			break
		}
	}
	return err
}

// replicaInSync: INFO replication says the link to the master is up.
func replicaInSync(ctx context.Context, c rueidis.Client) (bool, string, error) {
	txt, err := c.Do(ctx, c.B().Info().Section("replication").Build()).ToString()
	if err != nil {
		return false, "", err
	}
	st := InfoField(txt, "master_link_status")
	return st == "up", "master_link_status:" + st, nil
}

// sentinelReady: the sentinel sees the master up, the replica linked, and the others.
func sentinelReady(ctx context.Context, c rueidis.Client) (bool, string, error) {
	m, err := c.Do(ctx, c.B().Arbitrary("SENTINEL", "MASTER").Args(MasterName).Build()).AsStrMap()
	if err != nil {
		return false, "", err
	}
	state := fmt.Sprintf("flags=%s num-slaves=%s num-other-sentinels=%s", m["flags"], m["num-slaves"], m["num-other-sentinels"])
	if m["flags"] != "master" || m["num-slaves"] != "1" || m["num-other-sentinels"] != strconv.Itoa(sentinelCount-1) {
		return false, state, nil
	}
	reps, err := c.Do(ctx, c.B().SentinelReplicas().Master(MasterName).Build()).ToArray()
	if err != nil || len(reps) != 1 {
		return false, state, err
	}
	r, err := reps[0].AsStrMap()
	if err != nil {
		return false, state, err
	}
	state += " replica: flags=" + r["flags"] + " master-link-status=" + r["master-link-status"]
	return r["flags"] == "slave" && r["master-link-status"] == "ok", state, nil
}

// startCluster starts three cluster-enabled nodes, gives each a third of the slots and a
// distinct config epoch (as redis-cli --cluster create does), introduces them to each
// other, and waits until every node reports cluster_state:ok.
func (t *topology) startCluster(ctx context.Context, base ServerConfig) error {
	// Each node has its own directory, so one relative cluster-config-file name serves all.
	err := t.startData(ctx, base, clusterMasters,
		"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
		"--cluster-node-timeout", strconv.Itoa(clusterNodeTimeout))
	if err != nil {
		return err
	}
	major := 0
	if v := version(ctx, t.servers[0].Addr, t.password); v != "" {
		major, _ = strconv.Atoi(strings.SplitN(v, ".", 2)[0])
	}
	const slots = 16384
	for i, s := range t.servers {
		lo, hi := i*slots/clusterMasters, (i+1)*slots/clusterMasters-1
		if i == clusterMasters-1 {
			hi = slots - 1
		}
		err := withAdmin(ctx, s.Addr, t.password, func(ctx context.Context, c rueidis.Client) error {
			cmds := rueidis.Commands{c.B().ClusterSetConfigEpoch().ConfigEpoch(int64(i + 1)).Build()}
			if major >= 7 {
				cmds = append(cmds, c.B().ClusterAddslotsrange().StartSlotEndSlot().StartSlotEndSlot(int64(lo), int64(hi)).Build())
			} else {
				add := c.B().ClusterAddslots().Slot()
				for slot := lo; slot <= hi; slot++ {
					add = add.Slot(int64(slot))
				}
				cmds = append(cmds, add.Build())
			}
			return firstErr(c.DoMulti(ctx, cmds...))
		})
		if err != nil {
			return fmt.Errorf("cluster setup of %s: %w", s.Addr, err)
		}
	}
	// Only now the introductions: a node accepts a config epoch only while it knows no other
	// node, and a MEET makes the met node know the first one at once.
	err = withAdmin(ctx, t.servers[0].Addr, t.password, func(ctx context.Context, c rueidis.Client) error {
		cmds := make(rueidis.Commands, 0, len(t.servers)-1)
		for _, o := range t.servers[1:] {
			cmds = append(cmds, c.B().ClusterMeet().Ip("127.0.0.1").Port(int64(o.Port)).Build())
		}
		return firstErr(c.DoMulti(ctx, cmds...))
	})
	if err != nil {
		return fmt.Errorf("cluster setup: introducing the nodes: %w", err)
	}
	// A master refuses to call the cluster ok during its first 2 s (CLUSTER_WRITABLE_DELAY).
	return convergeAll(ctx, t.servers, t.password, "cluster node %s to report cluster_state:ok", clusterOK)
}

func firstErr(rs []rueidis.RedisResult) error {
	for _, r := range rs {
		if err := r.Error(); err != nil {
			return err
		}
	}
	return nil
}

func clusterOK(ctx context.Context, c rueidis.Client) (bool, string, error) {
	txt, err := c.Do(ctx, c.B().ClusterInfo().Build()).ToString()
	if err != nil {
		return false, "", err
	}
	state := "cluster_state:" + InfoField(txt, "cluster_state") + " cluster_known_nodes:" + InfoField(txt, "cluster_known_nodes")
	return InfoField(txt, "cluster_state") == "ok" && InfoField(txt, "cluster_known_nodes") == strconv.Itoa(clusterMasters), state, nil
}

// connect builds the clients of a spawned topology. The returned Conn stops every process
// on Close (unless detached: then the processes are `target up`'s and only the clients
// close).
func (t *topology) connect(ctx context.Context, d dialer) (*Conn, error) {
	c := &Conn{Mode: "spawned", Topology: t.name, RedisVersion: t.version, Servers: t.servers, Sentinels: t.sentinels,
		ReplicationVia: t.via}
	if t.via != "" {
		// lockbench's clients reach the master directly; only replication (and the
		// sentinels) go through the proxy.
		d.rewrite = chain(func(addr string) string {
			if addr == t.via {
				return t.viaMaster
			}
			return addr
		}, d.rewrite)
	}
	if !t.detached {
		c.onClose(t.stop)
	}
	for _, s := range t.servers {
		c.Addrs = append(c.Addrs, s.Addr)
	}
	for _, s := range t.sentinels {
		c.SentinelAddrs = append(c.SentinelAddrs, s.Addr)
	}
	if t.name == Sentinel {
		c.MasterName = MasterName
	}
	if err := c.connectClients(ctx, d); err != nil {
		return nil, err
	}
	return c, nil
}

// connectClients dials c.Topology's clients from c.Addrs, c.SentinelAddrs and c.MasterName;
// on error it closes c.
func (c *Conn) connectClients(ctx context.Context, d dialer) error {
	switch c.Topology {
	case Redlock:
		eps := make([]Endpoint, len(c.Addrs))
		for i, a := range c.Addrs {
			eps[i] = Endpoint{Addr: a}
		}
		return c.dialNodes(ctx, d, eps)
	case Sentinel:
		cl, opt, err := d.dial(ctx, c.MasterName, c.SentinelAddrs...)
		if err != nil {
			c.Close()
			return err
		}
		c.onClose(cl.Close)
		c.Client, c.ClientOption = cl, opt
		return nil
	case Cluster:
		// The nodes agree the cluster is ok; give rueidis the time to load the slot map
		// from one of them (it falls back to a single-node client if asked too early).
		var last error
		var ae *AuthError
		err := poll(ctx, convergeTimeout, func() bool {
			cl, opt, err := d.dial(ctx, "", c.Addrs...)
			if err != nil {
				last = err
				return errors.As(err, &ae) // credentials do not get better by waiting
			}
			if cl.Mode() != rueidis.ClientModeCluster || len(cl.Nodes()) != len(c.Addrs) {
				last = fmt.Errorf("rueidis sees %s mode with %d nodes", cl.Mode(), len(cl.Nodes()))
				cl.Close()
				return false
			}
			c.onClose(cl.Close)
			c.Client, c.ClientOption = cl, opt
			return true
		})
		if err != nil {
			c.Close()
			return fmt.Errorf("cluster client: %w (last: %v)", err, last)
		}
		if ae != nil {
			c.Close()
			return last
		}
		return nil
	default:
		cl, opt, err := d.dial(ctx, "", c.Addrs[0])
		if err != nil {
			c.Close()
			return err
		}
		c.onClose(cl.Close)
		c.Client, c.ClientOption = cl, opt
		return nil
	}
}

// stop stops every process concurrently and removes the directory. Safe to call twice.
func (t *topology) stop() {
	t.stopOnce.Do(func() {
		var wg sync.WaitGroup
		for _, s := range append(append([]*Server(nil), t.sentinels...), t.servers...) {
			wg.Go(s.Stop)
		}
		wg.Wait()
		_ = os.RemoveAll(t.dir)
	})
}

// pids lists the process ids of the data nodes, then the sentinels.
func (t *topology) pids() []int {
	var out []int
	for _, s := range append(append([]*Server(nil), t.servers...), t.sentinels...) {
		out = append(out, s.Pid())
	}
	return out
}

// withAdmin runs f with a short-lived plain client to one server (no cluster or sentinel
// discovery: setup talks to each node as it is), authenticated with password when set.
func withAdmin(ctx context.Context, addr, password string, f func(context.Context, rueidis.Client) error) error {
	opt := ClientOption(addr)
	opt.ForceSingleClient = true
	opt.Password = password
	opt.Dialer.Timeout = time.Second
	c, err := rueidis.NewClient(opt)
	if err != nil {
		return err
	}
	defer c.Close()
	return f(ctx, c)
}

// convergeAll runs converge on every server at once; what names the wait, %s the address.
func convergeAll(ctx context.Context, servers []*Server, password, what string, check func(context.Context, rueidis.Client) (bool, string, error)) error {
	var wg sync.WaitGroup
	errs := make([]error, len(servers))
	for i, s := range servers {
		wg.Go(func() { errs[i] = converge(ctx, fmt.Sprintf(what, s.Addr), s.Addr, password, check) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// converge polls check against addr every 20 ms until it says done, for at most
// convergeTimeout; the error names what was awaited and the last state seen.
func converge(ctx context.Context, what, addr, password string, check func(context.Context, rueidis.Client) (bool, string, error)) error {
	var state string
	var last error
	err := withAdmin(ctx, addr, password, func(ctx context.Context, c rueidis.Client) error {
		return poll(ctx, convergeTimeout, func() bool {
			cctx, cancel := context.WithTimeout(ctx, time.Second)
			defer cancel()
			var done bool
			done, state, last = check(cctx, c)
			return done
		})
	})
	if err != nil {
		detail := state
		if last != nil {
			detail = last.Error()
		}
		return fmt.Errorf("waiting for %s: %w (last: %s)", what, err, detail)
	}
	return nil
}

// poll calls f every 20 ms until it returns true, ctx ends or timeout passes.
func poll(ctx context.Context, timeout time.Duration, f func() bool) error {
	limit := time.NewTimer(timeout)
	defer limit.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if f() {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-limit.C:
			return fmt.Errorf("not done within %s", timeout)
		case <-tick.C:
		}
	}
}

// version reads redis_version from a server's INFO; "" when it cannot.
func version(ctx context.Context, addr, password string) string {
	var v string
	_ = withAdmin(ctx, addr, password, func(ctx context.Context, c rueidis.Client) error {
		ctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		txt, err := c.Do(ctx, c.B().Info().Section("server").Build()).ToString()
		v = InfoField(txt, "redis_version")
		return err
	})
	return v
}

// chain returns first followed by then (nil = none).
func chain(first, then func(string) string) func(string) string {
	if then == nil {
		return first
	}
	return func(addr string) string { return then(first(addr)) }
}

func atoiOr(s string, def int) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		return def
	}
	return n
}
