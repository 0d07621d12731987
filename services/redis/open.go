package redis

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Spec says where Redis is or what to start; it is what the flags --redis, --sentinel,
// --master and --topology say. The zero Spec spawns a single redis-server (or, without
// redis-server on PATH, embeds miniredis).
type Spec struct {
	// Redis are external servers (--redis host:port,...; each address one ParseAddr
	// accepts, URLs included): one address is a single server or a cluster (rueidis detects
	// which); several standalone servers are independent masters (the redlock topology).
	Redis []string
	// Sentinels (--sentinel host:port,..., or URLs whose credentials are the sentinels')
	// with Master (--master NAME) is an external master that sentinels manage.
	Sentinels []string
	Master    string
	// Topology (--topology) is single | redlock | sentinel | cluster: what lockbench spawns
	// (or embeds). "" = Need, else single. With Redis it is a check of what the external
	// target is, never a change: an external target's topology is what it is.
	Topology string
	// Need is the topology the chosen strategies imply: "redlock" when redlock is among
	// them, else "". The CLI sets it; a target that cannot serve it is a *SpecError.
	Need string
	// ConnectTimeout bounds each dial and first PING. Default DefaultConnectTimeout.
	ConnectTimeout time.Duration
	// StatePath is the state file of `lockbench target up`. Default DefaultStatePath().
	StatePath string
	// Dial, when set, rewrites a server address before every client connection (the fault
	// layer puts TCP proxies in between this way). It applies to every connection a client
	// makes, including to addresses learned from a sentinel or a cluster's slot map. It
	// must be safe for concurrent use.
	Dial func(addr string) string
	// Auth is how lockbench proves who it is to the servers and whether it encrypts: the
	// --user/--password/--tls* flags, and the credentials of redis:// and rediss:// URLs.
	// When spawning, a Password makes the servers require it (requirepass).
	Auth Auth
	// ReplicationVia, for a spawned sentinel topology, returns the address through which the
	// replica and the sentinels reach the initial master (the failover fault's proxy, which
	// delays replication and can cut it); lockbench's own clients still reach the master
	// directly. Set only when spawning; an external target with it is a *SpecError.
	ReplicationVia func(masterAddr string) (string, error)
}

// Auth is the credentials and transport security of every connection to the target. None
// of it is ever printed: not in errors, not in the report.
type Auth struct {
	// Username is the ACL user (AUTH username password); "" = the default user.
	Username string
	// Password is the AUTH password; "" = none.
	Password string
	// SentinelUsername and SentinelPassword authenticate to the sentinels, which have their
	// own (requirepass in sentinel.conf); "" = none.
	SentinelUsername, SentinelPassword string
	// TLS, when set, encrypts every connection (rediss://, --tls); nil = plain TCP.
	TLS *tls.Config
}

// SpecError is a target the flags ask for that cannot be served: a usage error (the CLI
// exits 2). Field is the flag without dashes ("topology", "redis", "sentinel", "master",
// "strategy"), Value what was given, Reason what is wrong and what to do instead.
type SpecError struct {
	Field  string
	Value  string
	Reason string
}

func (e *SpecError) Error() string {
	if e.Value == "" {
		return fmt.Sprintf("--%s: %s", e.Field, e.Reason)
	}
	return fmt.Sprintf("--%s %s: %s", e.Field, e.Value, e.Reason)
}

// Open connects to the target s describes, trying in this order:
//
//  1. s.Redis or s.Sentinels given: external servers (Mode "external"); Close closes the
//     clients only.
//  2. a live `lockbench target up` state file at s.StatePath: its servers (Mode
//     "spawned"); Close closes the clients only, the servers belong to `target down`. A
//     stale state file (its processes gone) is ignored, with a Note; one another user
//     could have written is a *StateError.
//  3. redis-server on PATH: spawn the topology (Mode "spawned") in a temporary directory;
//     Close stops every process and removes the directory, and the processes die with
//     this one if it is killed.
//  4. otherwise: miniredis in this process (Mode "embedded", single or redlock only), with
//     a Note the report must print.
//
// Addresses are what ParseAddr accepts (host:port, redis:// and rediss:// URLs); Auth
// applies to every connection, and a URL's credentials, TLS and database to its address
// (see Endpoint). When lockbench runs the servers (spawned, `target up`, embedded),
// Auth.Password makes them require it, and Auth.TLS, an ACL user other than "default" or
// sentinel credentials are a *SpecError: those servers speak plain TCP on loopback and
// know the default user only.
//
// A topology the spec cannot serve is a *SpecError; a malformed address an *AddrError
// (both usage errors); a server that refuses the credentials an *AuthError; an
// unreachable server, or one that does not speak RESP or TLS as expected, an
// *UnreachableError. No error holds a password.
func Open(ctx context.Context, s Spec) (*Conn, error) {
	redis, err := parseAddrs("redis", s.Redis)
	if err != nil {
		return nil, err
	}
	sentinels, err := parseAddrs("sentinel", s.Sentinels)
	if err != nil {
		return nil, err
	}
	if err := s.check(redis, sentinels); err != nil {
		return nil, err
	}
	d := newDialer(s)
	switch {
	case len(sentinels) > 0:
		c, err := connectSentinel(ctx, sentinels, s.Master, d)
		if err != nil {
			return nil, err
		}
		if s.Need != "" && s.Need != Sentinel {
			c.Close()
			return nil, &SpecError{Field: "sentinel", Value: strings.Join(c.SentinelAddrs, ","),
				Reason: fmt.Sprintf("a sentinel-managed master is one Redis, but %s; %s", needs(s.Need), needHint(s.Need))}
		}
		return c, nil
	case len(redis) > 0:
		c, err := connectExternal(ctx, redis, d)
		if err != nil {
			return nil, err
		}
		if err := s.checkExternal(c); err != nil {
			c.Close()
			return nil, err
		}
		return c, nil
	}

	want := s.Topology
	if want == "" {
		want = s.Need
	}
	var note string
	if statePath, err := resolveStatePath(s.StatePath); err == nil { // none: nothing was up
		switch st, err := readState(statePath); {
		case err == nil && !st.stale():
			return s.openState(ctx, st, d)
		case err == nil:
			note = fmt.Sprintf("ignored the stale state file %s of `lockbench target up` (its redis-server processes are gone; `lockbench target down` removes it)", statePath)
		case errors.As(err, new(*StateError)):
			return nil, err
		case !errors.Is(err, ErrNotUp):
			note = fmt.Sprintf("ignored the unreadable state file %s (%v)", statePath, err)
		}
	}
	if want == "" {
		want = Single
	}

	var c *Conn
	if _, err := RedisServerPath(); err == nil {
		t, err := spawn(ctx, want, "", false, s.ReplicationVia, s.Auth.Password)
		if err != nil {
			return nil, err
		}
		if c, err = t.connect(ctx, d); err != nil {
			return nil, err
		}
	} else {
		var err error
		if c, err = openEmbedded(ctx, want, s.Auth.Password, d); err != nil {
			return nil, err
		}
	}
	if note != "" {
		c.addNote(note)
	}
	return c, nil
}

// check validates what can be checked without connecting; redis and sentinels are
// s.Redis and s.Sentinels parsed.
func (s Spec) check(redis, sentinels []Endpoint) error {
	if s.Topology != "" && !slices.Contains(Topologies(), s.Topology) {
		return &SpecError{Field: "topology", Value: s.Topology, Reason: "unknown topology; valid: " + strings.Join(Topologies(), ", ")}
	}
	if s.Need != "" && !slices.Contains(Topologies(), s.Need) {
		return fmt.Errorf("target: Spec.Need %q is not a topology (valid: %s)", s.Need, strings.Join(Topologies(), ", "))
	}
	redisAddrs, sentinelAddrs := hostPorts(redis), hostPorts(sentinels)
	external := len(redis) > 0 || len(sentinels) > 0
	switch {
	case len(s.Redis) > 0 && len(s.Sentinels) > 0:
		return &SpecError{Field: "sentinel", Value: strings.Join(sentinelAddrs, ","),
			Reason: "give either --redis (servers reached directly) or --sentinel with --master (a master found through sentinels), not both"}
	case hasDuplicate(redisAddrs):
		return &SpecError{Field: "redis", Value: strings.Join(redisAddrs, ","),
			Reason: "lists an address twice; several --redis addresses are independent masters (or seeds of one cluster)"}
	case len(s.Sentinels) > 0 && s.Master == "":
		return &SpecError{Field: "master", Reason: "required with --sentinel: the name the sentinels monitor the master under (sentinel monitor NAME ...)"}
	case len(s.Sentinels) == 0 && s.Master != "":
		return &SpecError{Field: "master", Value: s.Master, Reason: "names a master that sentinels manage; give their addresses with --sentinel host:port,..."}
	case len(s.Sentinels) > 0 && s.Topology != "" && s.Topology != Sentinel:
		return &SpecError{Field: "topology", Value: s.Topology,
			Reason: "--sentinel reaches a sentinel-managed master: the topology is sentinel; drop --topology, or drop --sentinel to let lockbench spawn " + s.Topology}
	case s.ReplicationVia != nil && (len(s.Redis) > 0 || len(s.Sentinels) > 0):
		return &SpecError{Field: "fault", Value: "failover",
			Reason: "the failover fault needs a sentinel topology lockbench spawns itself (it controls the master's process and its replication); drop --redis/--sentinel"}
	case !external && s.Auth.TLS != nil:
		return &SpecError{Field: "tls",
			Reason: "encrypts the connections to servers you run (--redis, --sentinel); the servers lockbench starts itself (or `lockbench target up` started) listen on loopback without TLS: drop --tls, or pass --redis"}
	case !external && s.Auth.Username != "" && s.Auth.Username != "default":
		return &SpecError{Field: "user", Value: s.Auth.Username,
			Reason: "names an ACL user of servers you run (--redis, --sentinel); the servers lockbench starts itself have the default user only: drop --user (--password alone protects them), or pass --redis"}
	case len(sentinels) == 0 && (s.Auth.SentinelUsername != "" || s.Auth.SentinelPassword != ""):
		field := "sentinel-password"
		if s.Auth.SentinelPassword == "" {
			field = "sentinel-user"
		}
		return &SpecError{Field: field,
			Reason: "authenticates to the sentinels of --sentinel host:port,...; without --sentinel there are none to authenticate to (the sentinels lockbench starts require no password): drop it"}
	case len(s.Redis) > 0 && s.Topology == Sentinel:
		return &SpecError{Field: "topology", Value: s.Topology,
			Reason: "a sentinel-managed master is reached with --sentinel host:port,... --master NAME, not --redis; or drop --redis to let lockbench spawn a sentinel topology"}
	case s.Topology != "" && s.Need != "" && s.Topology != s.Need:
		return &SpecError{Field: "topology", Value: s.Topology,
			Reason: fmt.Sprintf("%s; use --topology %s or leave --topology out, or %s", needs(s.Need), s.Need, dropHint(s.Need))}
	}
	return nil
}

func hasDuplicate(addrs []string) bool {
	sorted := slices.Sorted(slices.Values(addrs))
	return len(slices.Compact(sorted)) != len(addrs)
}

// checkExternal checks what an external target turned out to be against Topology and Need.
func (s Spec) checkExternal(c *Conn) error {
	addrs := strings.Join(c.Addrs, ",")
	if s.Topology != "" && s.Topology != c.Topology {
		return &SpecError{Field: "topology", Value: s.Topology,
			Reason: fmt.Sprintf("--redis %s is %s; an external target's topology is what it is (one address: a single server or a cluster; several: independent masters), --topology only checks it — drop --topology, or drop --redis to let lockbench spawn %s",
				addrs, describe(c), s.Topology)}
	}
	if s.Need == Redlock && (c.Topology != Redlock || len(c.Nodes) < 3 || len(c.Nodes)%2 == 0) {
		return &SpecError{Field: "redis", Value: addrs,
			Reason: fmt.Sprintf("%s, but %s; %s", describe(c), needs(Redlock), needHint(Redlock))}
	}
	if s.Need != "" && s.Need != Redlock && s.Need != c.Topology {
		return &SpecError{Field: "redis", Value: addrs,
			Reason: fmt.Sprintf("%s, but %s; %s", describe(c), needs(s.Need), needHint(s.Need))}
	}
	return nil
}

// openState connects to the live topology of a `target up` state file.
func (s Spec) openState(ctx context.Context, st *State, d dialer) (*Conn, error) {
	want := s.Topology
	if want == "" {
		want = s.Need
	}
	if want != "" && want != st.Topology {
		field, value := "topology", s.Topology
		if s.Topology == "" {
			field, value = "strategy", s.Need
		}
		return nil, &SpecError{Field: field, Value: value,
			Reason: fmt.Sprintf("needs the %s topology, but `lockbench target up` runs %s (since %s); run `lockbench target down`, then `lockbench target up --topology %s`, or pass --redis",
				want, st.Topology, st.StartedAt.Local().Format(time.DateTime), want)}
	}
	c := &Conn{Mode: "spawned", Topology: st.Topology, Addrs: st.Addrs, SentinelAddrs: st.SentinelAddrs,
		MasterName: st.MasterName, RedisVersion: st.RedisVersion}
	if err := c.connectClients(ctx, d); err != nil {
		return nil, fmt.Errorf("the %s target of `lockbench target up` (state file %s): %w", st.Topology, st.path, err)
	}
	return c, nil
}

// describe says what an external target is, for error messages.
func describe(c *Conn) string {
	switch c.Topology {
	case Cluster:
		return "a cluster"
	case Redlock:
		return fmt.Sprintf("%d independent masters", len(c.Nodes))
	case Sentinel:
		return "a sentinel-managed master"
	}
	return "a single server"
}

// needs says what a needed topology requires.
func needs(topology string) string {
	if topology == Redlock {
		return "strategy redlock needs an odd number (at least 3) of independent masters"
	}
	return "the chosen strategies need the " + topology + " topology"
}

func needHint(topology string) string {
	if topology == Redlock {
		return "pass several --redis addresses (e.g. 5 standalone servers), or drop --redis to let lockbench spawn five, or drop redlock from --strategy"
	}
	return "drop --redis to let lockbench spawn it"
}

func dropHint(topology string) string {
	if topology == Redlock {
		return "drop redlock from --strategy"
	}
	return "choose other strategies"
}
