package redis_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/lockbench/lockbench/internal/redistest"
	"github.com/lockbench/lockbench/services/redis"
)

// secret is the password of these tests: distinctive, so that finding it in an error
// message, a report field, a command line or a state file cannot be a coincidence.
const secret = "Zebra-Secret-9f3x"

// wrongSecret is a wrong password, just as secret.
const wrongSecret = "Giraffe-Wrong-71q"

// noSecret fails t when err (or any text given) holds a password.
func noSecret(t *testing.T, what string, texts ...string) {
	t.Helper()
	for _, s := range texts {
		for _, pw := range []string{secret, wrongSecret, "pw-alice"} {
			if strings.Contains(s, pw) {
				t.Fatalf("%s shows a password: %s", what, s)
			}
		}
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return fmt.Sprintf("%v | %+v", err, err)
}

// openErr opens s, which must fail, and returns the error after checking it holds no
// password.
func openErr(t *testing.T, s redis.Spec) error {
	t.Helper()
	if s.StatePath == "" {
		s.StatePath = filepath.Join(t.TempDir(), "none.json")
	}
	if s.ConnectTimeout == 0 {
		s.ConnectTimeout = time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := redis.Open(ctx, s)
	if err == nil {
		c.Close()
		t.Fatalf("Open(%v) succeeded", s.Redis)
	}
	noSecret(t, "the error", errText(err))
	t.Log(err)
	return err
}

// openOK opens s, checks what the Conn says for the report holds no password, and runs a
// SET and a GET.
func openOK(t *testing.T, s redis.Spec) *redis.Conn {
	t.Helper()
	c := open(t, s)
	noSecret(t, "the Conn", strings.Join(c.Addrs, ","), strings.Join(c.SentinelAddrs, ","), c.Note, c.RedisVersion, c.MasterName)
	setGet(t, c.Client, "auth-k")
	return c
}

func wantAuthError(t *testing.T, err error, noPassword bool, want ...string) *redis.AuthError {
	t.Helper()
	var ae *redis.AuthError
	if !errors.As(err, &ae) || ae.NoPassword != noPassword {
		t.Fatalf("want an *AuthError (NoPassword %v), got %T: %v", noPassword, err, err)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Fatalf("message %q lacks %q", err, w)
		}
	}
	var ue *redis.UnreachableError
	if errors.As(err, &ue) {
		t.Fatalf("an authentication failure is also an *UnreachableError: %v", err)
	}
	return ae
}

func wantUnreachable(t *testing.T, err error, want ...string) {
	t.Helper()
	var ue *redis.UnreachableError
	if !errors.As(err, &ue) {
		t.Fatalf("want an *UnreachableError, got %T: %v", err, err)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Fatalf("message %q lacks %q", err, w)
		}
	}
}

const noPasswordHint = "authentication failed at %s: the server requires a password: --password, REDISCLI_AUTH or redis://:PASSWORD@host:port"

func TestParseAddr(t *testing.T) {
	t.Parallel()
	good := []struct {
		in   string
		want redis.Endpoint
	}{
		{"127.0.0.1:6379", redis.Endpoint{Addr: "127.0.0.1:6379"}},
		{"localhost:7000", redis.Endpoint{Addr: "localhost:7000"}},
		{"[::1]:6379", redis.Endpoint{Addr: "[::1]:6379"}},
		{"redis://h:6380", redis.Endpoint{Addr: "h:6380"}},
		{"redis://h", redis.Endpoint{Addr: "h:6379"}},
		{"redis://h/", redis.Endpoint{Addr: "h:6379"}},
		{"REDIS://h:1/0", redis.Endpoint{Addr: "h:1"}},
		{"redis://h:1/15", redis.Endpoint{Addr: "h:1", DB: 15}},
		{"redis://:pw@h:1", redis.Endpoint{Addr: "h:1", Password: "pw"}},
		{"redis://alice:pw@h:1/2", redis.Endpoint{Addr: "h:1", Username: "alice", Password: "pw", DB: 2}},
		{"redis://alice:@h:1", redis.Endpoint{Addr: "h:1", Username: "alice"}},
		{"redis://:p%40ss%2Fw%3Ar%23d@h:1", redis.Endpoint{Addr: "h:1", Password: "p@ss/w:r#d"}},
		{"redis://:p@ss@h:1", redis.Endpoint{Addr: "h:1", Password: "p@ss"}},
		{"rediss://redis.example.com:6380", redis.Endpoint{Addr: "redis.example.com:6380", TLS: true}},
		{"rediss://u:pw@[::1]:6380/3", redis.Endpoint{Addr: "[::1]:6380", Username: "u", Password: "pw", DB: 3, TLS: true}},
		{"redis://[::1]", redis.Endpoint{Addr: "[::1]:6379"}},
	}
	for _, tc := range good {
		got, err := redis.ParseAddr(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseAddr(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
	bad := []struct {
		in, want string // want: in the message
		shown    string // how the message shows the address
	}{
		{"localhost", "want host:port", "localhost"},
		{"", "want host:port", ""},
		{":6379", "no host", ":6379"},
		{"h:0", "port \"0\"", "h:0"},
		{"h:65536", "port \"65536\"", "h:65536"},
		{"h:redis", "port \"redis\"", "h:redis"},
		{"::1:6379", "brackets", "::1:6379"},
		{"pw@h:1", "credentials go in a URL", "***@h:1"},
		{"http://h:1", `unknown scheme "http"`, "http://h:1"},
		{"unix:///tmp/redis.sock", `unknown scheme "unix"`, "unix:///tmp/redis.sock"},
		{"redis://", "no host", "redis://"},
		{"redis://:" + secret + "@", "no host", "redis://:***@"},
		{"redis://h:x", "port \"x\"", "redis://h:x"},
		{"redis://h:", "empty port", "redis://h:"},
		{"redis://h:1/db", "not a database number", "redis://h:1/db"},
		{"redis://h:1/-1", "not a database number", "redis://h:1/-1"},
		{"redis://h:1/0/1", "not a database number", "redis://h:1/0/1"},
		{"redis://h:1?db=2", "query parameters", "redis://h:1?db=2"},
		{"redis://" + secret + "@h:1", "ambiguous", "redis://***@h:1"},
		{"redis://alice:" + secret + "@h:x", "port", "redis://alice:***@h:x"},
		{"redis://:" + secret + "/x@h:1", "percent-encoded", "redis://:***@h:1"},
		{"redis://:" + secret + "#x@h:1", "percent-encoded", "redis://:***@h:1"},
		{"redis://:" + secret + "?x@h:1", "percent-encoded", "redis://:***@h:1"},
		{"redis://:%zz" + secret + "@h:1", "percent-encoded", "redis://:***@h:1"},
		{"redis://u:" + secret + "@h:1 ", "port", "redis://u:***@h:1 "},
	}
	for _, tc := range bad {
		_, err := redis.ParseAddr(tc.in)
		var ae *redis.AddrError
		if !errors.As(err, &ae) {
			t.Errorf("ParseAddr(%q): want an *AddrError, got %v", tc.in, err)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, tc.want) || ae.Value != tc.shown || !strings.Contains(msg, "--redis") ||
			!strings.Contains(msg, "redis://[[user]:password@]host[:port][/db]") {
			t.Errorf("ParseAddr(%q) = %q (value %q); want %q and the address shown as %q", tc.in, msg, ae.Value, tc.want, tc.shown)
		}
		noSecret(t, "ParseAddr's error", msg)
	}
}

// TestSpecAddrs: every field that takes addresses takes URLs, and a malformed one is an
// *AddrError naming its flag, without the password.
func TestSpecAddrs(t *testing.T) {
	t.Parallel()
	for _, s := range []redis.Spec{
		{Redis: []string{"redis://:" + secret + "@h:x"}},
		{Sentinels: []string{"redis://u:" + secret + "@h:x"}, Master: "m"},
	} {
		err := openErr(t, s)
		var ae *redis.AddrError
		if !errors.As(err, &ae) || !strings.Contains(err.Error(), ":***@h:x") {
			t.Fatalf("want an *AddrError showing the redacted address, got %T: %v", err, err)
		}
		if len(s.Sentinels) > 0 && (ae.Flag != "sentinel" || !strings.Contains(err.Error(), "--sentinel")) {
			t.Fatalf("a bad --sentinel address: %v", err)
		}
	}
	_, err := redis.ConnectExternal(context.Background(), []string{"rediss://:" + secret + "@h:1/x"}, time.Second)
	var ae *redis.AddrError
	if !errors.As(err, &ae) {
		t.Fatalf("ConnectExternal with a bad URL: %v", err)
	}
	noSecret(t, "ConnectExternal's error", errText(err))

	// Credentials that lockbench's own servers cannot serve are usage errors.
	for field, a := range map[string]redis.Auth{
		"tls":               {TLS: (redistest.CA{}).ClientTLS()},
		"user":              {Username: "alice", Password: secret},
		"sentinel-password": {SentinelPassword: secret},
	} {
		err := openErr(t, redis.Spec{Auth: a})
		var se *redis.SpecError
		if !errors.As(err, &se) || se.Field != field {
			t.Fatalf("Auth %s when spawning: want a *SpecError on --%s, got %T: %v", field, field, err, err)
		}
	}
	var se *redis.SpecError
	if err := openErr(t, redis.Spec{Redis: []string{"127.0.0.1:1"}, Auth: redis.Auth{SentinelPassword: secret}}); !errors.As(err, &se) {
		t.Fatalf("a sentinel password with --redis: %T %v", err, err)
	}
	if _, err := redis.UpAuth(context.Background(), redis.Single, filepath.Join(t.TempDir(), "s.json"), redis.Auth{Username: "alice"}); !errors.As(err, &se) || se.Field != "user" {
		t.Fatalf("UpAuth with an ACL user: %v", err)
	}
}

// TestRequirePass: a server with requirepass, reached with a URL's password, with
// Auth.Password, with none and with a wrong one.
func TestRequirePass(t *testing.T) {
	t.Parallel()
	s := redistest.StartConfig(t, redis.ServerConfig{Password: secret})
	url := "redis://:" + secret + "@" + s.Addr

	c := openOK(t, redis.Spec{Redis: []string{url}})
	if !slices.Equal(c.Addrs, []string{s.Addr}) || c.Topology != redis.Single {
		t.Fatalf("Conn: addrs %v topology %s", c.Addrs, c.Topology)
	}
	openOK(t, redis.Spec{Redis: []string{s.Addr}, Auth: redis.Auth{Password: secret}})
	openOK(t, redis.Spec{Redis: []string{"redis://default:" + secret + "@" + s.Addr}})
	// The URL's password wins over the flags'.
	openOK(t, redis.Spec{Redis: []string{url}, Auth: redis.Auth{Password: wrongSecret}})
	wantAuthError(t, openErr(t, redis.Spec{Redis: []string{"redis://:" + wrongSecret + "@" + s.Addr}, Auth: redis.Auth{Password: secret}}),
		false, "authentication failed at "+s.Addr)

	wantAuthError(t, openErr(t, redis.Spec{Redis: []string{s.Addr}}), true, fmt.Sprintf(noPasswordHint, s.Addr))
	ae := wantAuthError(t, openErr(t, redis.Spec{Redis: []string{s.Addr}, Auth: redis.Auth{Password: wrongSecret}}),
		false, "authentication failed at "+s.Addr+" as the default user", "--password")
	if ae.Addr != s.Addr || ae.User != "" {
		t.Fatalf("AuthError %+v", ae)
	}
	// ConnectExternal takes URLs too.
	ext, err := redis.ConnectExternal(context.Background(), []string{url}, time.Second)
	if err != nil {
		t.Fatalf("ConnectExternal(URL): %v", err)
	}
	defer ext.Close()
	setGet(t, ext.Client, "ext-k")
	_, err = redis.ConnectExternal(context.Background(), []string{"redis://:" + wrongSecret + "@" + s.Addr}, time.Second)
	wantAuthError(t, err, false, "authentication failed")
	noSecret(t, "ConnectExternal's error", errText(err))

	// Redlock: every node gets the credentials; each URL its own.
	s2 := redistest.StartConfig(t, redis.ServerConfig{Password: wrongSecret})
	s3 := redistest.StartConfig(t, redis.ServerConfig{Password: secret})
	rl := openOK(t, redis.Spec{Redis: []string{s.Addr, "redis://:" + wrongSecret + "@" + s2.Addr, s3.Addr}, Auth: redis.Auth{Password: secret}})
	if rl.Topology != redis.Redlock || len(rl.Nodes) != 3 || !slices.Equal(rl.Addrs, []string{s.Addr, s2.Addr, s3.Addr}) {
		t.Fatalf("redlock: %s, %d nodes, %v", rl.Topology, len(rl.Nodes), rl.Addrs)
	}
	wantAuthError(t, openErr(t, redis.Spec{Redis: []string{s.Addr, s2.Addr, s3.Addr}, Auth: redis.Auth{Password: secret}}),
		false, "authentication failed at "+s2.Addr)
}

// TestACLUser: an ACL user by URL and by Auth; a wrong password, an unknown user, a user
// without permissions; a URL's database.
func TestACLUser(t *testing.T) {
	t.Parallel()
	s, admin := redistest.Server(t)
	for _, cmd := range [][]string{
		{"ACL", "SETUSER", "alice", "on", ">pw-alice", "~*", "&*", "+@all"},
		{"ACL", "SETUSER", "carol", "on", ">pw-alice", "~*", "&*", "-@all", "+hello", "+client"},
	} {
		if err := do(t, admin, admin.B().Arbitrary(cmd...).Build()).Error(); err != nil {
			t.Fatalf("%v: %v", cmd, err)
		}
	}
	openOK(t, redis.Spec{Redis: []string{"redis://alice:pw-alice@" + s.Addr}})
	openOK(t, redis.Spec{Redis: []string{s.Addr}, Auth: redis.Auth{Username: "alice", Password: "pw-alice"}})
	// The URL's user with the flags' password.
	openOK(t, redis.Spec{Redis: []string{"redis://alice:@" + s.Addr}, Auth: redis.Auth{Password: "pw-alice"}})

	ae := wantAuthError(t, openErr(t, redis.Spec{Redis: []string{"redis://alice:" + wrongSecret + "@" + s.Addr}}),
		false, `authentication failed at `+s.Addr+` as user "alice"`)
	if ae.User != "alice" {
		t.Fatalf("AuthError.User = %q", ae.User)
	}
	wantAuthError(t, openErr(t, redis.Spec{Redis: []string{s.Addr}, Auth: redis.Auth{Username: "bob", Password: secret}}),
		false, `authentication failed at `+s.Addr+` as user "bob"`, "no such user")
	ae = wantAuthError(t, openErr(t, redis.Spec{Redis: []string{"redis://carol:pw-alice@" + s.Addr}}), false, "permission denied", "+@all")
	if !ae.NoPermission {
		t.Fatalf("AuthError %+v: want NoPermission", ae)
	}

	// /db selects the database.
	c := openOK(t, redis.Spec{Redis: []string{"redis://alice:pw-alice@" + s.Addr + "/3"}})
	setGet(t, c.Client, "in-db-3")
	if n, err := do(t, admin, admin.B().Exists().Key("in-db-3").Build()).AsInt64(); err != nil || n != 0 {
		t.Fatalf("the key of /3 is in database 0: %d, %v", n, err)
	}
	opt := redis.ClientOption(s.Addr)
	opt.SelectDB = 3
	db3, err := rueidis.NewClient(opt)
	if err != nil {
		t.Fatal(err)
	}
	defer db3.Close()
	if v, err := do(t, db3, db3.B().Get().Key("in-db-3").Build()).ToString(); err != nil || v != "v-in-db-3" {
		t.Fatalf("database 3: %q, %v", v, err)
	}
	err = openErr(t, redis.Spec{Redis: []string{"redis://" + s.Addr + "/99"}})
	var se *redis.SpecError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "no database 99") {
		t.Fatalf("/99: %T %v", err, err)
	}
}

// TestTLS: a TLS-only server, reached with rediss:// and with Auth.TLS; without the CA;
// in plain TCP; and a TLS client against a plain server.
func TestTLS(t *testing.T) {
	t.Parallel()
	ca := redistest.NewCA(t)
	s := redistest.StartConfig(t, redis.ServerConfig{TLS: &ca.Files, Password: secret})
	rediss := "rediss://:" + secret + "@" + s.Addr

	c := openOK(t, redis.Spec{Redis: []string{rediss}, Auth: redis.Auth{TLS: ca.ClientTLS()}})
	if !slices.Equal(c.Addrs, []string{s.Addr}) {
		t.Fatalf("addrs %v", c.Addrs)
	}
	// --tls with a plain address; and through the fault layer's address rewrite, which
	// dials itself.
	rewrote := make(chan string, 10)
	openOK(t, redis.Spec{Redis: []string{s.Addr}, Auth: redis.Auth{Password: secret, TLS: ca.ClientTLS()},
		Dial: func(a string) string {
			select {
			case rewrote <- a:
			default:
			}
			return a
		}})
	if len(rewrote) == 0 {
		t.Fatal("Dial was not used")
	}

	// rediss:// alone trusts the system's CAs only.
	wantUnreachable(t, openErr(t, redis.Spec{Redis: []string{rediss}}), "TLS handshake failed", "unknown authority", "--tls-ca-cert")
	// A certificate for another name.
	other := ca.ClientTLS()
	other.ServerName = "redis.example.com"
	wantUnreachable(t, openErr(t, redis.Spec{Redis: []string{rediss}, Auth: redis.Auth{TLS: other}}), "TLS handshake failed", "redis.example.com")
	// Plain TCP to the TLS port.
	wantUnreachable(t, openErr(t, redis.Spec{Redis: []string{"redis://:" + secret + "@" + s.Addr}}), "speaks TLS", "--tls", "rediss://")
	// TLS to a plain server: it waits for a command that never comes.
	plain := redistest.Start(t, 1)[0]
	err := openErr(t, redis.Spec{Redis: []string{"rediss://" + plain.Addr}, Auth: redis.Auth{TLS: ca.ClientTLS()}, ConnectTimeout: 300 * time.Millisecond})
	wantUnreachable(t, err, "does not speak TLS", "drop --tls")
}

// TestDialErrors: refused, not Redis, silent.
func TestDialErrors(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	free := l.Addr().String()
	l.Close()
	wantUnreachable(t, openErr(t, redis.Spec{Redis: []string{"redis://:" + secret + "@" + free}}), "connection refused", free)

	http := serve(t, func(c net.Conn) { _, _ = c.Write([]byte("HTTP/1.1 400 Bad Request\r\n\r\n")) })
	err = openErr(t, redis.Spec{Redis: []string{http}, Auth: redis.Auth{Password: secret}})
	wantUnreachable(t, err, "does not speak RESP", http)
	if strings.Contains(err.Error(), "within") {
		t.Fatalf("not a timeout: %v", err)
	}

	silent := serve(t, func(c net.Conn) { time.Sleep(2 * time.Second) })
	wantUnreachable(t, openErr(t, redis.Spec{Redis: []string{silent}, Auth: redis.Auth{Password: secret}, ConnectTimeout: 300 * time.Millisecond}),
		"within 300ms", silent)

	_, err = redis.ConnectExternal(context.Background(), []string{free}, time.Second)
	wantUnreachable(t, err, "refused")
}

// serve runs a TCP server that handles each connection with f and closes it; it returns
// its address.
func serve(t *testing.T, f func(net.Conn)) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() { f(c); c.Close() }()
		}
	}()
	return l.Addr().String()
}

// TestIPv6: a server on [::1].
func TestIPv6(t *testing.T) {
	t.Parallel()
	if l, err := net.Listen("tcp", "[::1]:0"); err != nil {
		t.Skipf("no IPv6 loopback: %v", err)
	} else {
		l.Close()
	}
	s := redistest.Start(t, 1, "--bind", "127.0.0.1", "::1")[0]
	addr := net.JoinHostPort("::1", strconv.Itoa(s.Port))
	for _, a := range []string{addr, "redis://" + addr + "/0"} {
		c := openOK(t, redis.Spec{Redis: []string{a}})
		if !slices.Equal(c.Addrs, []string{addr}) {
			t.Fatalf("%s: addrs %v", a, c.Addrs)
		}
	}
}

// TestExternalSentinelAuth: sentinels with a password of their own in front of a master
// with another.
func TestExternalSentinelAuth(t *testing.T) {
	t.Parallel()
	master := redistest.StartConfig(t, redis.ServerConfig{Password: secret})
	conf := fmt.Sprintf("sentinel monitor m 127.0.0.1 %d 1\nsentinel auth-pass m %s\n", master.Port, secret)
	sentinel := redistest.StartConfig(t, redis.ServerConfig{Sentinel: conf, Password: wrongSecret})
	auth := redis.Auth{Password: secret, SentinelPassword: wrongSecret}

	c := openOK(t, redis.Spec{Sentinels: []string{sentinel.Addr}, Master: "m", Auth: auth})
	if c.Topology != redis.Sentinel || !slices.Equal(c.Addrs, []string{master.Addr}) || !slices.Equal(c.SentinelAddrs, []string{sentinel.Addr}) {
		t.Fatalf("sentinel: %s, addrs %v, sentinels %v", c.Topology, c.Addrs, c.SentinelAddrs)
	}
	// A --sentinel URL's password is the sentinels'.
	openOK(t, redis.Spec{Sentinels: []string{"redis://:" + wrongSecret + "@" + sentinel.Addr}, Master: "m", Auth: redis.Auth{Password: secret}})

	ae := wantAuthError(t, openErr(t, redis.Spec{Sentinels: []string{sentinel.Addr}, Master: "m", Auth: redis.Auth{Password: secret}}),
		true, "at sentinel "+sentinel.Addr, "--sentinel-password")
	if !ae.Sentinel {
		t.Fatalf("AuthError %+v: want Sentinel", ae)
	}
	ae = wantAuthError(t, openErr(t, redis.Spec{Sentinels: []string{sentinel.Addr}, Master: "m", Auth: redis.Auth{SentinelPassword: wrongSecret}}),
		true, `master "m" at `+master.Addr, "--password")
	if ae.Sentinel {
		t.Fatalf("AuthError %+v: the master refused, not the sentinel", ae)
	}
	wantAuthError(t, openErr(t, redis.Spec{Sentinels: []string{sentinel.Addr}, Master: "m", Auth: redis.Auth{Password: wrongSecret, SentinelPassword: wrongSecret}}),
		false, `master "m"`)

	var se *redis.SpecError
	if err := openErr(t, redis.Spec{Sentinels: []string{sentinel.Addr}, Master: "nope", Auth: auth}); !errors.As(err, &se) || se.Field != "master" || !strings.Contains(err.Error(), "monitors no master") {
		t.Fatalf("unknown master name: %T %v", err, err)
	}
	if err := openErr(t, redis.Spec{Sentinels: []string{master.Addr}, Master: "m", Auth: redis.Auth{Password: secret, SentinelPassword: secret}}); !errors.As(err, &se) || !strings.Contains(err.Error(), "is not a sentinel") {
		t.Fatalf("a Redis server as --sentinel: %T %v", err, err)
	}
	if err := openErr(t, redis.Spec{Sentinels: []string{"redis://:" + secret + "@" + sentinel.Addr, "127.0.0.1:1"}, Master: "m"}); !errors.As(err, &se) || !strings.Contains(err.Error(), "differ") {
		t.Fatalf("sentinel URLs that differ: %T %v", err, err)
	}
}

// TestSpawnedWithPassword: with Auth.Password, every topology lockbench spawns requires it,
// lockbench's own clients have it, and it is on no command line.
func TestSpawnedWithPassword(t *testing.T) {
	redistest.Require(t)
	for _, topo := range redis.Topologies() {
		t.Run(topo, func(t *testing.T) {
			t.Parallel()
			c := openOK(t, redis.Spec{Topology: topo, Auth: redis.Auth{Password: secret}})
			for _, srv := range append(slices.Clone(c.Servers), c.Sentinels...) {
				cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", srv.Pid()))
				if err != nil {
					t.Fatal(err)
				}
				noSecret(t, "a redis-server command line", string(cmdline))
			}
			// The password is in a private file in the server's directory.
			dir, err := os.Readlink(fmt.Sprintf("/proc/%d/cwd", c.Servers[0].Pid()))
			if err != nil {
				t.Fatal(err)
			}
			if fi, err := os.Stat(filepath.Join(dir, "auth.conf")); err != nil || fi.Mode().Perm() != 0o600 {
				t.Fatalf("auth.conf: %v, %v", fi.Mode(), err)
			}
			// Without the password, every data node refuses.
			for _, srv := range c.Servers {
				opt := redis.ClientOption(srv.Addr)
				opt.ForceSingleClient = true
				if cl, err := rueidis.NewClient(opt); err == nil {
					cl.Close()
					t.Fatalf("%s accepts a client without the password", srv.Addr)
				} else if !strings.Contains(err.Error(), "NOAUTH") {
					t.Fatalf("%s without the password: %v", srv.Addr, err)
				}
			}
			// The engine's cost sampling reaches every node.
			nodes := redis.Nodes(append([]rueidis.Client{c.Client}, c.Nodes...)...)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if _, err := redis.Snapshot(ctx, nodes); err != nil {
				t.Fatalf("Snapshot: %v", err)
			}

			switch topo {
			case redis.Sentinel:
				openOK(t, redis.Spec{Sentinels: c.SentinelAddrs, Master: c.MasterName, Auth: redis.Auth{Password: secret}})
				wantAuthError(t, openErr(t, redis.Spec{Sentinels: c.SentinelAddrs, Master: c.MasterName}),
					true, fmt.Sprintf(`authentication failed at master %q at %s`, c.MasterName, c.Addrs[0]))
			case redis.Cluster:
				cl := openOK(t, redis.Spec{Redis: []string{"redis://:" + secret + "@" + c.Addrs[1]}})
				if cl.Topology != redis.Cluster {
					t.Fatalf("external cluster: %s", cl.Topology)
				}
				var se *redis.SpecError
				if err := openErr(t, redis.Spec{Redis: []string{"redis://:" + secret + "@" + c.Addrs[0] + "/1"}}); !errors.As(err, &se) || !strings.Contains(err.Error(), "database 0 only") {
					t.Fatalf("a cluster with /1: %T %v", err, err)
				}
				wantAuthError(t, openErr(t, redis.Spec{Redis: []string{c.Addrs[0]}}), true, fmt.Sprintf(noPasswordHint, c.Addrs[0]))
			default:
				wantAuthError(t, openErr(t, redis.Spec{Redis: c.Addrs}), true, fmt.Sprintf(noPasswordHint, c.Addrs[0]))
			}
		})
	}
}

// TestEmbeddedWithPassword: without redis-server, the embedded servers require the password.
func TestEmbeddedWithPassword(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // not parallel: no redis-server, so Open embeds
	c, err := redis.Open(context.Background(), redis.Spec{Auth: redis.Auth{Password: secret}, StatePath: filepath.Join(t.TempDir(), "none.json")})
	if err != nil {
		t.Fatalf("embedded with a password: %v", err)
	}
	defer c.Close()
	setGet(t, c.Client, "k")
	opt := redis.ClientOption(c.Addrs[0])
	opt.ForceSingleClient, opt.AlwaysRESP2 = true, true
	cl, err := rueidis.NewClient(opt)
	if err == nil {
		err = do(t, cl, cl.B().Ping().Build()).Error()
		cl.Close()
	}
	if err == nil || !strings.Contains(err.Error(), "NOAUTH") {
		t.Fatalf("embedded without the password: %v", err)
	}
}

// TestUpWithPassword: `target up` (a cluster) with a password stores none, and runs need it.
func TestUpWithPassword(t *testing.T) {
	redistest.Require(t)
	t.Parallel()
	statePath := filepath.Join(t.TempDir(), "state.json")
	t.Cleanup(func() { _ = redis.Down(statePath) })
	st, err := redis.UpAuth(context.Background(), redis.Cluster, statePath, redis.Auth{Password: secret})
	if err != nil {
		t.Fatalf("UpAuth: %v", err)
	}
	if !st.RequirePass {
		t.Fatalf("State %+v: want RequirePass", st)
	}
	b, err := os.ReadFile(statePath)
	if err != nil {
		t.Fatal(err)
	}
	noSecret(t, "the state file", string(b))
	if !strings.Contains(string(b), `"requirepass": true`) {
		t.Fatalf("state file: %s", b)
	}
	_, nodes, err := redis.Status(statePath)
	for _, n := range nodes {
		if err != nil || !n.Alive || !n.Answering || n.Role != "master" {
			t.Fatalf("Status: %+v, %v", nodes, err)
		}
	}
	c := openOK(t, redis.Spec{StatePath: statePath, Auth: redis.Auth{Password: secret}})
	if c.Mode != "spawned" || c.Topology != redis.Cluster || !slices.Equal(c.Addrs, st.Addrs) {
		t.Fatalf("Open on the `target up` state: %+v", c)
	}
	start := time.Now()
	err = openErr(t, redis.Spec{StatePath: statePath})
	wantAuthError(t, err, true, "the server requires a password", "target up")
	if time.Since(start) > 5*time.Second {
		t.Fatalf("the authentication failure took %s", time.Since(start))
	}
	if err := redis.Down(statePath); err != nil {
		t.Fatalf("Down: %v", err)
	}
	requireGone(t, st.Pids, 0)
}

// TestSentinelFailoverWithPassword: the sentinels authenticate to the master and the
// replica (auth-pass), promote the replica, and lockbench's client follows it; the files that
// hold the password stay private.
func TestSentinelFailoverWithPassword(t *testing.T) {
	redistest.Require(t)
	t.Parallel()
	c := openOK(t, redis.Spec{Topology: redis.Sentinel, Auth: redis.Auth{Password: secret}})
	killed := failOver(t, c)
	t.Logf("failover with a password in %s", time.Since(killed).Round(time.Millisecond))

	// Every file of the topology that holds the password is readable by its owner only, in
	// directories only the owner can enter.
	dir, err := os.Readlink(fmt.Sprintf("/proc/%d/cwd", c.Servers[1].Pid()))
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Dir(dir)
	found := 0
	// The servers and sentinels run on: a configuration rewrite writes a temporary file and
	// renames it into place, so an entry listed may be gone when it is read.
	gone := func(err error) bool { return errors.Is(err, fs.ErrNotExist) }
	err = filepath.WalkDir(root, func(p string, e os.DirEntry, err error) error {
		if err != nil {
			if gone(err) {
				return nil
			}
			return err
		}
		fi, err := e.Info()
		if gone(err) {
			return nil
		}
		if err != nil {
			return err
		}
		if e.IsDir() {
			if fi.Mode().Perm()&0o077 != 0 {
				t.Errorf("directory %s: mode %v", p, fi.Mode())
			}
			return nil
		}
		if !fi.Mode().IsRegular() {
			return nil // the readiness check's unix socket
		}
		b, err := os.ReadFile(p)
		if gone(err) {
			return nil
		}
		if err != nil {
			return err
		}
		if strings.Contains(string(b), secret) {
			// redis-server rewrites its configuration (CONFIG REWRITE after a promotion,
			// a sentinel's state) with mode 0644: the directories keep it private.
			found++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if found == 0 {
		t.Fatal("no configuration file holds the password")
	}
}

// TestTrickyPassword: a password with spaces, quotes, backslashes, a newline and non-ASCII
// survives the configuration files (requirepass, masterauth, sentinel auth-pass) and a URL.
func TestTrickyPassword(t *testing.T) {
	redistest.Require(t)
	t.Parallel()
	const pw = "a b\"c\\d'e $f\n#g?h/i@j:k%l é"
	s := redistest.StartConfig(t, redis.ServerConfig{Password: pw})
	openOK(t, redis.Spec{Redis: []string{s.Addr}, Auth: redis.Auth{Password: pw}})
	u := (&url.URL{Scheme: "redis", User: url.UserPassword("", pw), Host: s.Addr, Path: "/2"}).String()
	ep, err := redis.ParseAddr(u)
	if err != nil || ep.Password != pw || ep.DB != 2 {
		t.Fatalf("ParseAddr(%q) = %+v, %v", u, ep, err)
	}
	openOK(t, redis.Spec{Redis: []string{u}})
	// The sentinel topology: the replica syncs (masterauth) and the sentinels see both
	// (auth-pass), or Open would not return.
	openOK(t, redis.Spec{Topology: redis.Sentinel, Auth: redis.Auth{Password: pw}})
}

// TestPasswordNeverToSquatter: when another process holds the port, starting a server with
// a password fails without sending the password there.
func TestPasswordNeverToSquatter(t *testing.T) {
	redistest.Require(t)
	t.Parallel()
	received := make(chan string, 100)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	var accepted atomic.Int64 // counted in accept order, before each one's reader runs
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			go func() {
				defer c.Close()
				_ = c.SetReadDeadline(time.Now().Add(time.Second))
				b := make([]byte, 4096)
				n, _ := c.Read(b)
				received <- string(b[:n])
			}()
		}
	}()
	squatter := l.Addr().String()
	_, port, _ := net.SplitHostPort(squatter)
	p, _ := strconv.Atoi(port)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s, err := redis.StartServer(ctx, redis.ServerConfig{Port: p, Password: secret, StartTimeout: time.Second})
	if err == nil {
		s.Stop()
		t.Fatal("a server started on a port another process holds")
	}
	noSecret(t, "StartServer's error", errText(err))
	// A last connection of the test's own: the squatter accepts in order, so once its
	// message is read every connection StartServer made has been accepted; then each one's
	// reader reports what it read (within its 1s read deadline).
	last, err := net.Dial("tcp", squatter)
	if err != nil {
		t.Fatal(err)
	}
	defer last.Close()
	const marker = "the test's own last connection"
	if _, err := last.Write([]byte(marker)); err != nil {
		t.Fatal(err)
	}
	want := int64(-1)
	timeout := time.After(30 * time.Second)
	for got := int64(0); want < 0 || got < want; got++ {
		select {
		case r := <-received:
			if r == marker {
				want = accepted.Load()
				continue
			}
			noSecret(t, "what the squatter received", r)
		case <-timeout:
			t.Fatalf("the squatter's readers reported %d of %d connections in 30s", got, want)
		}
	}
}
