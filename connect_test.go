package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/internal/redistest"
	"github.com/lockbench/lockbench/services/redis"
)

// The ways a production Redis is reached — a password in a URL, an ACL user, the password in
// REDISCLI_AUTH as redis-cli reads it, TLS with the deployment's CA — each run a short
// workload to the end; a wrong password exits 1 saying authentication failed; and the secret
// shows nowhere in what lockbench prints.
func TestE2EConnectingToRealDeployments(t *testing.T) {
	const pw, alicePW = "pw-Zq81-s3cret", "alice-Xk2-s3cret"
	plain := redistest.StartConfig(t, redis.ServerConfig{Password: pw,
		Args: []string{"--user", "alice", "on", ">" + alicePW, "~*", "&*", "+@all"}})
	ca := redistest.NewCA(t)
	tlsOnly := redistest.StartConfig(t, redis.ServerConfig{TLS: &ca.Files})
	short := []string{"--strategy", "token", "--workers", "2", "--duration", "300ms", "--warmup", "0", "-q", "--format", "json"}
	// A TLS handshake under the race detector takes a starved machine (load 30) most of a
	// 300ms window: one acquire, inconclusive. A warm-up connects the workers first (its
	// --warmup comes after short's: the last one counts).
	handshake := []string{"--warmup", "1s"}

	for _, tc := range []struct {
		name string
		env  string // REDISCLI_AUTH
		args []string
		code int
		want string // in stderr
	}{
		{"password in the URL", "", []string{"--redis", "redis://:" + pw + "@" + plain.Addr}, exitOK, ""},
		{"ACL user in the URL", "", []string{"--redis", "redis://alice:" + alicePW + "@" + plain.Addr}, exitOK, ""},
		{"ACL user by flags", "", []string{"--redis", plain.Addr, "--user", "alice", "--password", alicePW}, exitOK, ""},
		{"REDISCLI_AUTH", pw, []string{"--redis", plain.Addr}, exitOK, ""},
		{"TLS with the CA", "", []string{"--redis", "rediss://" + tlsOnly.Addr, "--tls-ca-cert", ca.Files.CAFile}, exitOK, ""},
		{"wrong password", "", []string{"--redis", "redis://:not-" + pw + "@" + plain.Addr}, exitFailure, "authentication failed"},
		{"no password", "", []string{"--redis", plain.Addr}, exitFailure, "requires a password"},
		{"TLS without the CA", "", []string{"--redis", "rediss://" + tlsOnly.Addr}, exitFailure, "--tls-ca-cert"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("REDISCLI_AUTH", tc.env)
			args := slices.Concat([]string{"run"}, tc.args, short)
			if strings.HasPrefix(tc.args[1], "rediss://") {
				args = append(args, handshake...)
			}
			code, stdout, stderr := cli(args...)
			if code != tc.code || !strings.Contains(stderr, tc.want) {
				t.Fatalf("exit %d (want %d), stderr %q should say %q", code, tc.code, stderr, tc.want)
			}
			for _, secret := range []string{pw, alicePW} {
				if strings.Contains(stdout+stderr, secret) {
					t.Errorf("the password is in the output:\n%s\n%s", stdout, stderr)
				}
			}
			if code == exitOK && !strings.Contains(stdout, `"verdict": "safe"`) {
				t.Errorf("the run did not finish safe: %s", stdout)
			}
		})
	}
}
