package main

import (
	"crypto/tls"
	"crypto/x509"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/lockbench/lockbench/profiles"
	"github.com/lockbench/lockbench/services/redis"
)

// connFlags say where Redis is and how to reach it: addresses, credentials, TLS, and the
// state file of `lockbench target up`. run, sweep and capacity share them.
type connFlags struct {
	redis, sentinel, master, topology string
	connectTimeout                    time.Duration
	state                             string

	user, password, sentinelUser, sentinelPassword string
	tls, tlsInsecure                               bool
	tlsCA, tlsCert, tlsKey                         string
}

// passwordEnv is where the password comes from when --password is not given: redis-cli
// reads the same variable, so a shell set up for redis-cli is set up for lockbench.
const passwordEnv = "REDISCLI_AUTH"

func (c *connFlags) bind(fs *pflag.FlagSet) {
	fs.StringVar(&c.redis, "redis", "", "external Redis: host:port, redis://[user[:password]@]host:port[/db] or rediss://... (TLS), comma-separated; several standalone servers are redlock's masters (default: spawn redis-server, or embed one)")
	fs.StringVar(&c.sentinel, "sentinel", "", "external sentinels host:port or redis[s]:// URLs, comma-separated (with --master)")
	fs.StringVar(&c.master, "master", "", "the sentinel master name (with --sentinel)")
	fs.StringVar(&c.topology, "topology", "", "what to spawn without --redis: "+strings.Join(redis.Topologies(), ", ")+" (default: what the strategies need)")
	fs.DurationVar(&c.connectTimeout, "connect-timeout", redis.DefaultConnectTimeout, "give up reaching Redis after this long")
	fs.StringVar(&c.user, "user", "", "ACL user to authenticate as (AUTH user password)")
	fs.StringVar(&c.password, "password", "", "password to authenticate with (default $"+passwordEnv+", as redis-cli); spawned servers require it")
	fs.StringVar(&c.sentinelUser, "sentinel-user", "", "ACL user for the sentinels")
	fs.StringVar(&c.sentinelPassword, "sentinel-password", "", "password for the sentinels (they have their own)")
	fs.BoolVar(&c.tls, "tls", false, "connect with TLS (also implied by rediss:// and the --tls-* files)")
	fs.StringVar(&c.tlsCA, "tls-ca-cert", "", "PEM file of the CA that signed the servers' certificates (default: the system's)")
	fs.StringVar(&c.tlsCert, "tls-cert", "", "PEM client certificate, for servers that check clients (with --tls-key)")
	fs.StringVar(&c.tlsKey, "tls-key", "", "PEM private key of --tls-cert")
	fs.BoolVar(&c.tlsInsecure, "tls-insecure", false, "do not verify the servers' certificates (testing only)")
	fs.StringVar(&c.state, "state", redis.DefaultStatePath(), "the state file of 'lockbench target up' (default $XDG_STATE_HOME/lockbench/target.json, else ~/.local/state/lockbench/target.json; it must be yours and writable by you only), used when no --redis is given")
}

// auth builds the credentials and TLS settings the flags give; the password falls back to
// $REDISCLI_AUTH. Errors name the flag.
func (c *connFlags) auth() (redis.Auth, error) {
	a := redis.Auth{Username: c.user, Password: c.password, SentinelUsername: c.sentinelUser, SentinelPassword: c.sentinelPassword}
	if a.Password == "" {
		a.Password = os.Getenv(passwordEnv)
	}
	if !c.tls && !c.tlsInsecure && c.tlsCA == "" && c.tlsCert == "" && c.tlsKey == "" {
		return a, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: c.tlsInsecure} //nolint:gosec // --tls-insecure says so
	if c.tlsCA != "" {
		pem, err := os.ReadFile(c.tlsCA)
		if err != nil {
			return a, usageErrorf("--tls-ca-cert: %v", err)
		}
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(pem) {
			return a, usageErrorf("--tls-ca-cert %s: no PEM certificate in it", c.tlsCA)
		}
	}
	switch {
	case (c.tlsCert == "") != (c.tlsKey == ""):
		return a, usageErrorf("--tls-cert and --tls-key go together: a client certificate and its key")
	case c.tlsCert != "":
		pair, err := tls.LoadX509KeyPair(c.tlsCert, c.tlsKey)
		if err != nil {
			return a, usageErrorf("--tls-cert/--tls-key: %v", err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	a.TLS = cfg
	return a, nil
}

// spec is the Redis target the flags describe (the session adds what the strategies and
// faults need).
func (c *connFlags) spec() (redis.Spec, error) {
	auth, err := c.auth()
	if err != nil {
		return redis.Spec{}, err
	}
	return redis.Spec{
		Redis: profiles.SplitList(c.redis), Sentinels: profiles.SplitList(c.sentinel), Master: c.master,
		Topology: c.topology, ConnectTimeout: c.connectTimeout, StatePath: c.state, Auth: auth,
	}, nil
}
