package redis_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/redistest"
	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/services"
	"github.com/lockbench/lockbench/services/redis"
	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/workload"
)

// SplitCalls asks the server which commands act on keys: data commands are those, script
// calls the EVAL family, and a command without keys (PUBLISH, PING, a subcommand such as
// CLIENT SETNAME) is neither.
func TestSplitCallsAsksTheServer(t *testing.T) {
	_, c := redistest.Server(t)
	calls := map[string]uint64{
		"set": 1, "get": 2, "del": 4, "hset": 8, // data: 15
		"evalsha": 16, "eval": 32, "fcall": 64, // scripts: 112
		"publish": 128, "ping": 256, "client|setname": 512, "info": 1024, "script|load": 2048,
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	sp, err := redis.SplitCalls(ctx, c, calls)
	if err != nil {
		t.Fatal(err)
	}
	if sp.Data != 15 || sp.Scripts != 112 {
		t.Errorf("split %+v: want 15 data commands (set, get, del, hset) and 112 script calls (evalsha, eval, fcall)", sp)
	}
}

// The built-in token and lua:examples/token, which runs token's commands inside scripts,
// cost the same data commands per acquire (uncontended: SET; GET and DEL in the release
// script) and differ by the acquire's script call: Redis's count, which commands_per_acquire
// is, has one command more per acquire for the Lua lock.
func TestLuaTokenSameDataCommandsAsToken(t *testing.T) {
	s := redistest.Start(t, 1)[0]
	lua := "lua:../../examples/token"
	c := workload.Config{Base: workload.Base{Load: workload.Load{Workers: 4, Keys: 100000, Rate: 1000}, Lock: workload.Lock{TTL: strategies.TTLOf(10 * time.Second)}}}
	phases := []workload.Phase{c.Phase("token"), c.Phase(lua)}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	f := &redis.Flags{Redis: s.Addr, ConnectTimeout: 10 * time.Second}
	conn, err := f.Open(ctx, services.Need{Phases: phases, ConnectTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	cfg := workload.Config{Phases: phases, Duration: 2 * time.Second, Warmup: 200 * time.Millisecond, AcquireTimeout: 5 * time.Second, KeyPrefix: redistest.Prefix(t)}
	rs, err := workload.Run(ctx, cfg, conn, workload.Options{})
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]report.RedisCost{}
	n := math.Inf(1) // the fewest acquires of the two
	for _, r := range rs {
		t.Logf("%s: %d acquired, %.3f commands, %.3f data commands, %.3f script calls per acquire", r.Strategy, r.Acquired,
			r.Redis.CommandsPerAcquire, r.Redis.DataCommandsPerAcquire, r.Redis.ScriptCallsPerAcquire)
		if r.Acquired < 60 || !r.Redis.CommandsSplit {
			t.Fatalf("%s: %d acquired, commands split %v: want at least 60 acquires and the split measured", r.Strategy, r.Acquired, r.Redis.CommandsSplit)
		}
		by[r.Strategy] = r.Redis
		n = min(n, float64(r.Acquired))
	}
	tok, lu := by["token"], by[lua]
	// The window's edges cut at most 4 acquires in flight at each end (the open loop's
	// bound, Workers), each with up to 3 commands counted without its acquire or the other
	// way round: 24 commands at most, a fraction of one per acquire. A wrong split is off
	// by one or more per acquire.
	slack := 24/n + 0.01
	near := func(x, want float64) bool { return math.Abs(x-want) < slack }
	if !near(tok.DataCommandsPerAcquire, 3) || !near(lu.DataCommandsPerAcquire, tok.DataCommandsPerAcquire) {
		t.Errorf("data commands per acquire: token %.3f, %s %.3f; want both 3 (SET; GET, DEL)", tok.DataCommandsPerAcquire, lua, lu.DataCommandsPerAcquire)
	}
	if !near(tok.ScriptCallsPerAcquire, 1) || !near(lu.ScriptCallsPerAcquire, 2) {
		t.Errorf("script calls per acquire: token %.3f, %s %.3f; want 1 (the release script) and 2 (acquire and release scripts)", tok.ScriptCallsPerAcquire, lua, lu.ScriptCallsPerAcquire)
	}
	if d := lu.CommandsPerAcquire - tok.CommandsPerAcquire; !near(d, 1) {
		t.Errorf("commands per acquire: %s %.3f - token %.3f = %.3f; want Redis's count 1 higher (the acquire's script call)", lua, lu.CommandsPerAcquire, tok.CommandsPerAcquire, d)
	}
}
