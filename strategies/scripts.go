package strategies

import (
	"embed"

	"github.com/redis/rueidis"
)

//go:embed lua/*.lua
var luaFiles embed.FS

// script builds a Lua script from its embedded file once, at package initialisation.
// rueidis computes the SHA1 client-side and runs EVALSHA, falling back to EVAL when the
// server answers NOSCRIPT (a fresh or restarted server).
func script(name string) *rueidis.Lua {
	return rueidis.NewLuaScript(scriptSource(name))
}

// scriptWithTurn builds a script of Redisson's that announces a release: its file follows
// turn_pass.lua, whose announce it calls where Redisson publishes.
func scriptWithTurn(name string) *rueidis.Lua {
	return rueidis.NewLuaScript(scriptSource("turn_pass") + scriptSource(name))
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
