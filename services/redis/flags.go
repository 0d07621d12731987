package redis

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"os"
	"strings"
	"time"

	"github.com/redis/rueidis"
	"github.com/spf13/pflag"

	"github.com/lockbench/lockbench/internal/bounded"
	"github.com/lockbench/lockbench/internal/usage"
	"github.com/lockbench/lockbench/profiles"
	"github.com/lockbench/lockbench/services"
	"github.com/lockbench/lockbench/strategies"
)

// PasswordEnv is where the password comes from when --password is not given: redis-cli
// reads the same variable, so a shell set up for redis-cli is set up for lockbench.
const PasswordEnv = "REDISCLI_AUTH"

// Flags say where Redis is and how to reach it: addresses, credentials, TLS, and the state
// file of `lockbench target up`. The load commands (run, sweep, capacity) bind them through
// the services registry, as every lock service's flags.
type Flags struct {
	Redis, Sentinel, Master, Topology string
	ConnectTimeout                    time.Duration
	State                             string

	User, Password, SentinelUser, SentinelPassword string
	TLS, TLSInsecure                               bool
	TLSCA, TLSCert, TLSKey                         string

	fs *pflag.FlagSet
	// replication, for a run with a failover, is the address through which a spawned
	// replica reaches its initial master (ReplicateVia).
	replication func(master string) (string, error)
}

// FlagsOf are the Redis flags among a command's bound service flags.
func FlagsOf(b *services.Bound) *Flags { return b.Flags(Name).(*Flags) }

// Bind binds the flags to fs.
func (f *Flags) Bind(fs *pflag.FlagSet) {
	f.fs = fs
	fs.StringVar(&f.Redis, "redis", "", "external Redis: host:port, redis://[user[:password]@]host:port[/db] or rediss://... (TLS), comma-separated; several standalone servers are redlock's masters (default: spawn redis-server, or embed one)")
	fs.StringVar(&f.Sentinel, "sentinel", "", "external sentinels host:port or redis[s]:// URLs, comma-separated (with --master)")
	fs.StringVar(&f.Master, "master", "", "the sentinel master name (with --sentinel)")
	fs.StringVar(&f.Topology, "topology", "", "what to spawn without --redis: "+strings.Join(Topologies(), ", ")+" (default: what the strategies need)")
	fs.DurationVar(&f.ConnectTimeout, "connect-timeout", DefaultConnectTimeout, "give up reaching Redis after this long")
	fs.StringVar(&f.User, "user", "", "ACL user to authenticate as (AUTH user password)")
	fs.StringVar(&f.Password, "password", "", "password to authenticate with (default $"+PasswordEnv+", as redis-cli); spawned servers require it")
	fs.StringVar(&f.SentinelUser, "sentinel-user", "", "ACL user for the sentinels")
	fs.StringVar(&f.SentinelPassword, "sentinel-password", "", "password for the sentinels (they have their own)")
	fs.BoolVar(&f.TLS, "tls", false, "connect with TLS (also implied by rediss:// and the --tls-* files)")
	fs.StringVar(&f.TLSCA, "tls-ca-cert", "", "PEM file of the CA that signed the servers' certificates (default: the system's)")
	fs.StringVar(&f.TLSCert, "tls-cert", "", "PEM client certificate, for servers that check clients (with --tls-key)")
	fs.StringVar(&f.TLSKey, "tls-key", "", "PEM private key of --tls-cert")
	fs.BoolVar(&f.TLSInsecure, "tls-insecure", false, "do not verify the servers' certificates (testing only)")
	fs.StringVar(&f.State, "state", DefaultStatePath(), "the state file of 'lockbench target up' (default $XDG_STATE_HOME/lockbench/target.json, else ~/.local/state/lockbench/target.json; it must be yours and writable by you only), used when no --redis is given")
}

// Named reports whether the user named a Redis (--redis, --sentinel) or its topology
// (--topology): the run reaches it even when no phase locks on it.
func (f *Flags) Named() bool {
	return f.Redis != "" || f.Sentinel != "" || (f.fs != nil && f.fs.Changed("topology"))
}

// External reports whether the user gave the servers (--redis, --sentinel) rather than
// letting lockbench spawn or find them.
func (f *Flags) External() bool { return f.Redis != "" || f.Sentinel != "" }

// Check refuses a bad value before anything runs, naming the flag.
func (f *Flags) Check() error {
	if f.ConnectTimeout <= 0 {
		return usage.Errorf("invalid --connect-timeout %s: want a duration > 0, e.g. 5s", f.ConnectTimeout)
	}
	if err := services.CheckList("redis", f.Redis, true); err != nil {
		return err
	}
	if err := services.CheckList("sentinel", f.Sentinel, true); err != nil {
		return err
	}
	_, err := f.Auth() // the TLS files are read now, not when Redis is dialled
	return err
}

// Auth builds the credentials and TLS settings the flags give; the password falls back to
// $REDISCLI_AUTH. Errors name the flag.
func (f *Flags) Auth() (Auth, error) {
	a := Auth{Username: f.User, Password: f.Password, SentinelUsername: f.SentinelUser, SentinelPassword: f.SentinelPassword}
	if a.Password == "" {
		a.Password = os.Getenv(PasswordEnv)
	}
	if !f.TLS && !f.TLSInsecure && f.TLSCA == "" && f.TLSCert == "" && f.TLSKey == "" {
		return a, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: f.TLSInsecure} //nolint:gosec // --tls-insecure says so
	if f.TLSCA != "" {
		pem, err := bounded.ReadFile(f.TLSCA, MaxPEMBytes, "a PEM file")
		if err != nil {
			return a, usage.Errorf("--tls-ca-cert: %v", err)
		}
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(pem) {
			return a, usage.Errorf("--tls-ca-cert %s: no PEM certificate in it", f.TLSCA)
		}
	}
	switch {
	case (f.TLSCert == "") != (f.TLSKey == ""):
		return a, usage.Errorf("--tls-cert and --tls-key go together: a client certificate and its key")
	case f.TLSCert != "":
		cert, err := bounded.ReadFile(f.TLSCert, MaxPEMBytes, "a PEM file")
		if err != nil {
			return a, usage.Errorf("--tls-cert: %v", err)
		}
		key, err := bounded.ReadFile(f.TLSKey, MaxPEMBytes, "a PEM file")
		if err != nil {
			return a, usage.Errorf("--tls-key: %v", err)
		}
		pair, err := tls.X509KeyPair(cert, key)
		if err != nil {
			return a, usage.Errorf("--tls-cert/--tls-key: %v", err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	a.TLS = cfg
	return a, nil
}

// MaxPEMBytes bounds what --tls-ca-cert, --tls-cert and --tls-key read: a CA bundle of
// every public root weighs about 200 KiB; a wrong path (/dev/zero) is refused, not read to
// the end of memory.
const MaxPEMBytes = 1 << 20

// Spec is the target the flags describe, before what a run's strategies and faults add
// (Open).
func (f *Flags) Spec() (Spec, error) {
	auth, err := f.Auth()
	if err != nil {
		return Spec{}, err
	}
	return Spec{
		Redis: profiles.SplitList(f.Redis), Sentinels: profiles.SplitList(f.Sentinel), Master: f.Master,
		Topology: f.Topology, ConnectTimeout: f.ConnectTimeout, StatePath: f.State, Auth: auth,
	}, nil
}

// Open reaches (or spawns, or embeds) the Redis the flags describe, shaped by what the run
// needs: redlock's masters when a phase's strategy locks on several, the fault proxies
// from the first connection on, and for a failover a sentinel topology whose replica
// replicates through its proxy. The Conn is a *Home.
func (f *Flags) Open(ctx context.Context, need services.Need) (services.Conn, error) {
	spec, err := f.Spec()
	if err != nil {
		return nil, err
	}
	for _, ph := range need.Phases {
		if info, _ := strategies.Lookup(ph.Strategy); info.MultiNode {
			spec.Need = Redlock
		}
	}
	spec.Dial = need.Via
	if f.replication != nil {
		spec.ReplicationVia = f.replication
		if spec.Topology == "" && spec.Need == "" {
			spec.Topology = Sentinel // the only topology a failover can happen in
		}
	}
	c, err := Open(ctx, spec)
	if err != nil {
		return nil, err
	}
	// Servers that outlive the run (the user's, or `target up`'s) learn its key prefixes,
	// so that the next run removes what a run killed with SIGKILL left (runs.go). A server
	// spawned for the run, or embedded, dies with it.
	if c.Client != nil && c.Servers == nil && c.Mode != "embedded" {
		c.runs = startRuns(ctx, c.Client, append([]rueidis.Client{c.Client}, c.Nodes...))
		c.onClose(c.runs.close)
	}
	return &Home{c}, nil
}
