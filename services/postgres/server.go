package postgres

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lockbench/lockbench/internal/proc"
	"github.com/lockbench/lockbench/services/internal/server"
)

// Binaries finds the newest installed PostgreSQL's initdb and postgres (Debian keeps them
// in /usr/lib/postgresql/<major>/bin, off the PATH).
func Binaries() (initdb, postgres string, err error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(dirs, func(a, b string) int {
		ma, _ := strconv.Atoi(filepath.Base(filepath.Dir(a)))
		mb, _ := strconv.Atoi(filepath.Base(filepath.Dir(b)))
		return mb - ma
	})
	var initdbs, servers []string
	for _, d := range dirs {
		initdbs, servers = append(initdbs, filepath.Join(d, "initdb")), append(servers, filepath.Join(d, "postgres"))
	}
	initdbs, servers = append(initdbs, "initdb"), append(servers, "postgres")
	if initdb, err = server.LookPath("PostgreSQL's initdb (Debian: apt-get install postgresql)", initdbs...); err != nil {
		return "", "", err
	}
	postgres, err = server.LookPath("PostgreSQL's postgres (Debian: apt-get install postgresql)", servers...)
	return initdb, postgres, err
}

// Spawn initdbs a private cluster in a temporary directory and starts it on a free loopback
// port — as the postgres system user when lockbench runs as root, which PostgreSQL refuses
// to run as — with fsync off (its data is thrown away), max_connections room for
// maxConns sessions (one per worker) and pg_stat_statements loaded, then connects to it.
// Close stops it with a fast shutdown and removes the directory.
func Spawn(ctx context.Context, maxConns int) (*Conn, error) {
	initdb, postgres, err := Binaries()
	if err != nil {
		return nil, err
	}
	dir, err := server.TempDir("postgres")
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*Conn, error) {
		removeDir(dir)
		return nil, err
	}
	if err := server.Chown(dir, "postgres"); err != nil {
		return fail(err)
	}
	data := filepath.Join(dir, "data")
	if err := server.Run(ctx, server.Spec{Name: "initdb", Path: initdb, Dir: dir, User: "postgres", Args: []string{
		"-D", data, "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8", "--locale=C",
	}}); err != nil {
		return fail(err)
	}
	port, err := proc.FreePort()
	if err != nil {
		return fail(fmt.Errorf("PostgreSQL: no free port on 127.0.0.1: %w", err))
	}
	p, err := server.Start(server.Spec{Name: "postgres", Path: postgres, Dir: dir, User: "postgres", Args: []string{
		"-D", data, "-k", dir, "-h", "127.0.0.1", "-p", strconv.Itoa(port),
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
		"-c", "max_connections=" + strconv.Itoa(max(maxConns+20, 100)),
		"-c", "shared_preload_libraries=pg_stat_statements",
		"-c", "log_min_messages=warning",
	}})
	if err != nil {
		return fail(err)
	}
	cfg, err := pgx.ParseConfig(fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port))
	if err != nil {
		p.Stop(nil, 0)
		return fail(err)
	}
	c := &Conn{Config: cfg, server: p, dir: dir}
	err = p.Ready(ctx, 30*time.Second, func(ctx context.Context) error {
		pc, err := pgx.ConnectConfig(ctx, cfg.Copy())
		if err == nil {
			_, err = pc.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
			pc.Close(ctx)
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

func removeDir(dir string) {
	if dir != "" {
		_ = os.RemoveAll(dir)
	}
}
