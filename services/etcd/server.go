package etcd

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/lockbench/lockbench/internal/proc"
	"github.com/lockbench/lockbench/services/internal/server"
)

// Spawn starts a private etcd cluster of members members (1, or 3 or 5 for a quorum that
// survives losing one or two) on free loopback ports in a temporary directory, waits until
// every member is healthy (which needs a leader) and connects to all of them. Close stops
// them (SIGKILL: their data is thrown away, and an etcd leader left alone takes seconds to
// exit on SIGTERM) and removes the directory.
func Spawn(ctx context.Context, members int) (*Conn, error) {
	if members < 1 || members > 7 {
		return nil, fmt.Errorf("etcd members: %d; valid: 1 to 7 (3 or 5 for a quorum)", members)
	}
	bin, err := server.LookPath("etcd (Debian: apt-get install etcd-server)", "etcd", "/usr/bin/etcd")
	if err != nil {
		return nil, err
	}
	dir, err := server.TempDir("etcd")
	if err != nil {
		return nil, err
	}
	c := &Conn{dir: dir, servers: []*server.Process{}}
	var clients, peers, cluster []string
	// Every member's two ports at once, distinct: chosen one at a time, two members were
	// once handed the same port ("initial cluster ... has duplicate url").
	ports, err := proc.FreePorts(2 * members)
	if err != nil {
		removeDir(dir)
		return nil, fmt.Errorf("etcd: no free port on 127.0.0.1")
	}
	for i := range members {
		clients = append(clients, fmt.Sprintf("http://127.0.0.1:%d", ports[2*i]))
		peers = append(peers, fmt.Sprintf("http://127.0.0.1:%d", ports[2*i+1]))
		cluster = append(cluster, fmt.Sprintf("n%d=%s", i+1, peers[i]))
	}
	for i := range members {
		name := fmt.Sprintf("n%d", i+1)
		p, err := server.Start(server.Spec{Name: "etcd-" + name, Path: bin, Dir: dir, Args: []string{
			"--name", name, "--data-dir", filepath.Join(dir, name),
			"--listen-client-urls", clients[i], "--advertise-client-urls", clients[i],
			"--listen-peer-urls", peers[i], "--initial-advertise-peer-urls", peers[i],
			"--initial-cluster", strings.Join(cluster, ","),
			"--initial-cluster-state", "new", "--initial-cluster-token", filepath.Base(dir),
			"--log-level", "warn",
		}})
		if err != nil {
			c.Close()
			return nil, err
		}
		c.servers = append(c.servers, p)
	}
	c.Endpoints = clients
	for i, p := range c.servers {
		if err := p.Ready(ctx, 30*time.Second, func(ctx context.Context) error { return healthy(ctx, clients[i]) }); err != nil {
			c.Close()
			return nil, err
		}
	}
	if err := c.connect(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// Servers are the spawned members (nil for an external cluster), for the faults.
func (c *Conn) Servers() []*server.Process { return c.servers }

// healthy asks a member's /health.
func healthy(ctx context.Context, endpoint string) error {
	body, err := get(ctx, endpoint+"/health", nil)
	if err != nil {
		return err
	}
	if !strings.Contains(body, `"true"`) {
		return fmt.Errorf("/health: %s", strings.TrimSpace(body))
	}
	return nil
}

// version reads a member's /version ("3.4.23"), "" when it cannot.
func version(ctx context.Context, endpoint string, tc *tls.Config) string {
	body, err := get(ctx, endpoint+"/version", tc)
	if err != nil {
		return ""
	}
	var v struct {
		Server string `json:"etcdserver"`
	}
	if json.Unmarshal([]byte(body), &v) != nil {
		return ""
	}
	return v.Server
}

// get reads an HTTP endpoint of a member (health, version, metrics), bounded in time.
func get(ctx context.Context, u string, tc *tls.Config) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return "", err
	}
	client := http.DefaultClient
	if tc != nil {
		client = &http.Client{Transport: &http.Transport{TLSClientConfig: tc}}
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	return string(b), nil
}

func stopAll(ps []*server.Process) {
	for _, p := range ps {
		p.Stop(nil, 0)
	}
}

func removeDir(dir string) {
	if dir != "" {
		_ = os.RemoveAll(dir)
	}
}
