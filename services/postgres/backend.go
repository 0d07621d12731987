package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lockbench/lockbench/services/internal/adapter"
	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/workload"
)

// CostUnit says what the CMD/ACQ column counts for PostgreSQL, with or without
// pg_stat_statements.
func (c *Conn) CostUnit() string {
	if c.Statements {
		return "PostgreSQL requests = statements run (pg_stat_statements calls)"
	}
	return "PostgreSQL requests = transactions (pg_stat_database xact_commit + xact_rollback; without pg_stat_statements, and flushed by each backend at most once a second: approximate over short phases)"
}

// Scope is the database: the cost, stuck locks of a phase of pg-advisory. (The barrier
// and the clock of a multi-process run stay on Redis.)
func (c *Conn) Scope(strategies.Info, string) workload.Scope { return scope{c: c} }

type scope struct{ c *Conn }

type reading struct {
	adapter.Reading
	started time.Time
}

const (
	statementsQuery = "SELECT coalesce(sum(calls), 0)::bigint, pg_postmaster_start_time() FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())"
	xactQuery       = "SELECT (xact_commit + xact_rollback)::bigint, pg_postmaster_start_time() FROM pg_stat_database WHERE datname = current_database()"
)

func (s scope) read(ctx context.Context) (reading, error) {
	r := reading{Reading: adapter.Reading{At: time.Now()}}
	q := xactQuery
	if s.c.Statements {
		q = statementsQuery
	}
	var count int64
	err := s.c.query(func(pc *pgx.Conn) error { return pc.QueryRow(ctx, q).Scan(&count, &r.started) })
	if err != nil {
		return r, err
	}
	r.Requests = uint64(max(count, 0))
	if s.c.server != nil {
		if c, err := s.c.server.CPU(); err == nil {
			r.CPU = c
		}
	}
	return r, nil
}

var errServerChanged = errors.New("the PostgreSQL server restarted during the phase")

// StartCost reads the counters as the window opens and again as it closes; the first
// reading itself is counted by the second, and left out.
func (s scope) StartCost(ctx context.Context) (func(context.Context) (workload.Cost, error), error) {
	return adapter.StartCost(ctx, s.read, func(before, after reading) (workload.Cost, error) {
		if !after.started.Equal(before.started) {
			return workload.Cost{}, errServerChanged
		}
		cost, err := before.Spent(after.Reading, 1, errServerChanged)
		cost.Requests = max(cost.Requests, 1) - 1 // the first reading's own statement
		return cost, err
	})
}

// StuckLocks counts the advisory locks lockbench's sessions still hold once every worker
// released: a lock taken but never given back.
func (s scope) StuckLocks(ctx context.Context, _ func(string) bool) (uint64, error) {
	var n int64
	err := s.c.query(func(pc *pgx.Conn) error {
		return pc.QueryRow(ctx, `SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
			WHERE l.locktype = 'advisory' AND l.granted AND a.application_name = $1`, AppName).Scan(&n)
	})
	return uint64(n), err
}
