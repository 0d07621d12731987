package strategies

import (
	"context"
	"crypto/sha1"
	"embed"
	"encoding/hex"

	"github.com/redis/rueidis"
)

//go:embed lua/*.lua
var luaFiles embed.FS

// script builds a Lua script from its embedded file once, at package initialisation.
func script(name string) *luaScript {
	return newLuaScript(scriptSource(name))
}

// scriptWithTurn builds a script of Redisson's that announces a release: its file follows
// turn_pass.lua, whose announce it calls where Redisson publishes.
func scriptWithTurn(name string) *luaScript {
	return newLuaScript(scriptSource("turn_pass") + scriptSource(name))
}

// luaScript is a Lua script run as rueidis runs one (rueidis v1.0.79, lua.go, Lua.Exec):
// EVALSHA with the SHA1 computed here, and EVAL when the server answers NOSCRIPT (a fresh
// or restarted server). Lua.Exec builds both commands in its own frame, 496 bytes that lie
// under the wait for the reply: the deepest point of a worker's stack, which has to fit
// the 4 KiB a worker parks on (see base.wait). Here each command is built in a frame of
// its own, and Exec's frame holds the reply and little else.
type luaScript struct {
	src, sha string
}

func newLuaScript(src string) *luaScript {
	sum := sha1.Sum([]byte(src))
	return &luaScript{src: src, sha: hex.EncodeToString(sum[:])}
}

// Exec runs the script with keys and args on c.
func (s *luaScript) Exec(ctx context.Context, c rueidis.Client, keys, args []string) rueidis.RedisResult {
	r := c.Do(ctx, s.evalsha(c, keys, args))
	if noScript(r.Error()) {
		r = c.Do(ctx, s.eval(c, keys, args))
	}
	return r
}

// ExecInt64 and ExecString are Exec with its reply read as rueidis.RedisResult's AsInt64
// and ToString read it, in a frame of their own: the parsing, inlined in the caller's
// frame, took 100-200 bytes there, and the reply itself as many again, all of it under the
// wait for the reply. Each repeats Exec's body: calling Exec would put its frame under
// theirs, and a generic one took as much again (208 bytes, and Exec's 216 above it).
func (s *luaScript) ExecInt64(ctx context.Context, c rueidis.Client, keys, args []string) (int64, error) {
	r := c.Do(ctx, s.evalsha(c, keys, args))
	if noScript(r.Error()) {
		r = c.Do(ctx, s.eval(c, keys, args))
	}
	return asInt64(r)
}

func (s *luaScript) ExecString(ctx context.Context, c rueidis.Client, keys, args []string) (string, error) {
	r := c.Do(ctx, s.evalsha(c, keys, args))
	if noScript(r.Error()) {
		r = c.Do(ctx, s.eval(c, keys, args))
	}
	return asString(r)
}

//go:noinline
func asString(r rueidis.RedisResult) (string, error) { return r.ToString() }

// noScript reports whether err is the server's NOSCRIPT: it does not have the script.
//
//go:noinline
func noScript(err error) bool {
	e, ok := rueidis.IsRedisErr(err)
	return ok && e.IsNoScript()
}

//go:noinline
func asInt64(r rueidis.RedisResult) (int64, error) { return r.AsInt64() }

//go:noinline
func (s *luaScript) evalsha(c rueidis.Client, keys, args []string) rueidis.Completed {
	return c.B().Evalsha().Sha1(s.sha).Numkeys(int64(len(keys))).Key(keys...).Arg(args...).Build()
}

//go:noinline
func (s *luaScript) eval(c rueidis.Client, keys, args []string) rueidis.Completed {
	return c.B().Eval().Script(s.src).Numkeys(int64(len(keys))).Key(keys...).Arg(args...).Build()
}

func scriptSource(name string) string {
	src, err := luaFiles.ReadFile("lua/" + name + ".lua")
	if err != nil {
		panic("strategies: missing embedded script " + name) // a build defect, caught by any test
	}
	return string(src)
}

var (
	unlockScript              = script("unlock")
	turnScript                = script("turn")
	joinScript                = script("join")
	renewScript               = script("renew")
	fencedAcquireScript       = script("fenced_acquire")
	hashAcquireScript         = script("hash_acquire")
	hashReleaseScript         = script("hash_release")
	hashRenewScript           = script("hash_renew")
	fairAcquireScript         = script("fair_acquire")
	fairReleaseScript         = script("fair_release")
	redissonAcquireScript     = script("redisson_acquire")
	redissonUnlockScript      = scriptWithTurn("redisson_unlock")
	redissonSpinAcquireScript = script("redisson_spin_acquire")
	redissonSpinUnlockScript  = script("redisson_spin_unlock")
	redissonExpireScript      = script("redisson_expire")
	redissonFairAcquireScript = script("redisson_fair_acquire")
	redissonFairUnlockScript  = script("redisson_fair_unlock")
	redissonFairLeaveScript   = script("redisson_fair_leave")
	semaphoreSetScript        = script("semaphore_set")
	semaphoreAcquireScript    = script("semaphore_acquire")
	semaphoreReleaseScript    = scriptWithTurn("semaphore_release")
	xsemaphoreAcquireScript   = script("xsemaphore_acquire")
	xsemaphoreReleaseScript   = scriptWithTurn("xsemaphore_release")
	xsemaphoreAvailableScript = script("xsemaphore_available")
	rwWriteAcquireScript      = script("rw_write_acquire")
	rwWriteUnlockScript       = scriptWithTurn("rw_write_unlock")
	rwReadAcquireScript       = script("rw_read_acquire")
	rwReadUnlockScript        = scriptWithTurn("rw_read_unlock")
	rwReadRenewScript         = script("rw_read_renew")
)
