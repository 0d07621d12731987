package postgres_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/lockbench/lockbench/services/postgres"
)

// terminate ends the backends holding the advisory lock id, as an operator (or a crash)
// would, and returns how many it ended.
func terminate(t *testing.T, ctx context.Context, c *postgres.Conn, id int64) int {
	t.Helper()
	pc, err := pgx.ConnectConfig(ctx, c.Config.Copy())
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close(ctx)
	// pg_locks splits a bigint advisory key into classid (high 32 bits) and objid (low).
	hi, lo := uint32(uint64(id)>>32), uint32(uint64(id))
	var n int
	err = pc.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_locks
		WHERE locktype = 'advisory' AND granted AND classid = $1::bigint::oid AND objid = $2::bigint::oid AND objsubid = 1`, int64(hi), int64(lo)).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
