package strategies

import (
	"crypto/sha1"
	"embed"
	"encoding/hex"

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

func scriptSource(name string) string {
	src, err := luaFiles.ReadFile("lua/" + name + ".lua")
	if err != nil {
		panic("strategies: missing embedded script " + name) // a build defect, caught by any test
	}
	return string(src)
}

// scriptSHA is the SHA1 that EVALSHA names a script by, for the one place that pipelines a
// script with a plain command (rueidis.Lua runs scripts alone).
func scriptSHA(name string) string {
	sum := sha1.Sum([]byte(scriptSource(name)))
	return hex.EncodeToString(sum[:])
}

var (
	unlockScript        = script("unlock")
	unlockPublishScript = script("unlock_publish")
	unlockPublishSHA    = scriptSHA("unlock_publish")
	renewScript         = script("renew")
	fencedAcquireScript = script("fenced_acquire")
	hashAcquireScript   = script("hash_acquire")
	hashReleaseScript   = script("hash_release")
	hashRenewScript     = script("hash_renew")
	fairAcquireScript   = script("fair_acquire")
	fairReleaseScript   = script("fair_release")
)
