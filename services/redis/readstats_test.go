package redis_test

import (
	"context"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/redistest"
	"github.com/lockbench/lockbench/services/redis"
)

// The cost reads run on a dedicated connection the pool keeps between them. One the server
// has cut since (here CLIENT KILL; a proxy's partition or a restart in a run) fails once,
// and the read goes on a new connection: the cost is still measured.
func TestReadStatsSurvivesACutConnection(t *testing.T) {
	s, c := redistest.Server(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := redis.ReadStats(ctx, c, s.Addr); err != nil {
		t.Fatal(err)
	}
	// Every connection but the pipelined one sending this: the pooled dedicated one.
	killed, err := c.Do(ctx, c.B().ClientKill().TypeNormal().SkipmeYes().Build()).AsInt64()
	if err != nil {
		t.Fatal(err)
	}
	if killed == 0 {
		t.Fatal("CLIENT KILL cut no connection: no dedicated connection was kept")
	}
	if _, err := redis.ReadStats(ctx, c, s.Addr); err != nil {
		t.Errorf("INFO after its pooled connection was cut: %v", err)
	}
}
