package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/lockbench/lockbench/internal/cmdline"
	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/services/redis"
)

const targetSynopsis = `Keeps a spawned Redis topology running between runs, so that several runs measure the
same servers: 'up' starts it (detached) and records it in a state file, which 'run' uses when
no --redis is given; 'status' says whether each process is alive; 'down' stops them.

  lockbench target up --topology redlock
  lockbench target status
  lockbench target down`

func targetCmd(args []string, stdout, _ io.Writer) error {
	fs := newFlags("target up|down|status [flags]", targetSynopsis, stdout)
	topology := fs.String("topology", redis.Single, "up: what to start: "+strings.Join(redis.Topologies(), ", "))
	state := fs.String("state", redis.DefaultStatePath(), "the state file (default $XDG_STATE_HOME/lockbench/target.json, else ~/.local/state/lockbench/target.json; it must be yours and writable by you only)")
	password := fs.String("password", "", "up: make the servers require this password (default $"+redis.PasswordEnv+"); runs then need it too")
	if err := fs.Parse(args); err != nil {
		if isHelp(err) {
			return err // pflag has printed the usage
		}
		return flagError(err)
	}
	if fs.NArg() != 1 {
		return usageErrorf("want one of: up, down, status")
	}
	switch fs.Arg(0) {
	case "up":
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		auth, err := (&redis.Flags{Password: *password}).Auth() // or $REDISCLI_AUTH, as a run's --password
		if err != nil {
			return err
		}
		st, err := redis.UpAuth(ctx, *topology, *state, auth)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "started %s: %s (Redis %s)\nstate: %s\nruns without --redis use it%s; stop it with 'lockbench target down%s'\n",
			st.Topology, strings.Join(st.Addrs, ", "), st.RedisVersion, *state, cmdline.Repeat(fs.Changed("state"), " with --state ", *state), cmdline.Repeat(fs.Changed("state"), " --state ", *state))
		if st.RequirePass {
			fmt.Fprintln(stdout, "the servers require the password: give runs --password or "+redis.PasswordEnv)
		}
		return nil
	case "down":
		if err := redis.Down(*state); err != nil {
			if errors.Is(err, redis.ErrNotUp) {
				return fmt.Errorf("nothing to stop: no topology is up (no state file %s)", *state)
			}
			return err
		}
		fmt.Fprintln(stdout, "stopped")
		return nil
	case "status":
		st, nodes, err := redis.Status(*state)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s topology, started %s, state %s\n", st.Topology, st.StartedAt.Format(time.RFC3339), *state)
		if st.Stale {
			fmt.Fprintf(stdout, "stale: none of its processes is alive; 'lockbench target down%s' removes the state file\n", cmdline.Repeat(fs.Changed("state"), " --state ", *state))
		}
		var rows [][]string
		for _, n := range nodes {
			rows = append(rows, n.Row())
		}
		return report.Table(stdout, redis.StatusHeader, rows)
	}
	return usageErrorf("unknown target subcommand %q; valid: up, down, status", fs.Arg(0))
}
