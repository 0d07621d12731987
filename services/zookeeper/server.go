package zookeeper

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/lockbench/lockbench/internal/proc"
	"github.com/lockbench/lockbench/services/internal/server"
)

// jar is where Debian's zookeeper package (zookeeperd) puts the server.
const jar = "/usr/share/java/zookeeper.jar"

// Spawn starts a private ZooKeeper (standalone) on a free loopback port in a temporary
// directory, waits until it answers `ruok` and connects to it. The server runs on the JVM
// directly (zkServer.sh would open JMX on every interface): tickTime 200 ms so that session
// timeouts from 400 ms up are granted, no client connection limit (a session per worker),
// and the four-letter words lockbench reads. Close stops it with SIGKILL (its data is thrown
// away) and removes the directory.
func Spawn(ctx context.Context) (*Conn, error) {
	java, err := server.LookPath("java (Debian: apt-get install zookeeperd)", "java", "/usr/bin/java")
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(jar); err != nil {
		return nil, fmt.Errorf("ZooKeeper is not installed (no %s; Debian: apt-get install zookeeperd)", jar)
	}
	dir, err := server.TempDir("zookeeper")
	if err != nil {
		return nil, err
	}
	port, err := proc.FreePort()
	if err != nil {
		removeDir(dir)
		return nil, fmt.Errorf("ZooKeeper: no free port on 127.0.0.1: %w", err)
	}
	cfg := strings.Join([]string{
		"tickTime=200",
		"minSessionTimeout=400",
		"maxSessionTimeout=120000",
		"dataDir=" + filepath.Join(dir, "data"),
		"clientPortAddress=127.0.0.1",
		fmt.Sprintf("clientPort=%d", port),
		"maxClientCnxns=0",
		"admin.enableServer=false",
		"4lw.commands.whitelist=ruok,mntr,srvr",
		"forceSync=no",
	}, "\n") + "\n"
	conf := filepath.Join(dir, "zoo.cfg")
	if err := os.WriteFile(conf, []byte(cfg), 0o600); err != nil {
		removeDir(dir)
		return nil, fmt.Errorf("ZooKeeper: write %s: %w", conf, err)
	}
	p, err := server.Start(server.Spec{Name: "zookeeper", Path: java, Dir: dir, Args: []string{
		"-Xmx512m", "-XX:+UseSerialGC",
		"-Dzookeeper.log.dir=" + dir, "-Dzookeeper.root.logger=WARN,CONSOLE",
		"-cp", jar, "org.apache.zookeeper.server.ZooKeeperServerMain", conf,
	}})
	if err != nil {
		removeDir(dir)
		return nil, err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	c := &Conn{Servers: []string{addr}, servers: []*server.Process{p}, dir: dir}
	err = p.Ready(ctx, 30*time.Second, func(ctx context.Context) error {
		out, err := fourLetter(ctx, addr, "ruok")
		if err == nil && !strings.HasPrefix(out, "imok") {
			err = fmt.Errorf("ruok answered %q", out)
		}
		return err
	})
	if err == nil {
		err = c.connect(ctx)
	}
	if err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// Processes are the spawned servers (nil for an external ensemble), for the faults.
func (c *Conn) Processes() []*server.Process { return c.servers }

func removeDir(dir string) {
	if dir != "" {
		_ = os.RemoveAll(dir)
	}
}
