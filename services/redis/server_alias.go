package redis

import "github.com/lockbench/lockbench/services/redis/server"

// The redis-server processes lockbench spawns are package server's, which imports nothing of
// lockbench's engine: internal/redistest starts them for the engine's own tests.
type (
	Server       = server.Server
	ServerConfig = server.ServerConfig
	ServerTLS    = server.ServerTLS
)

var (
	// StartServer starts one redis-server (see server.StartServer).
	StartServer = server.StartServer
	// RedisServerPath finds redis-server on PATH.
	RedisServerPath = server.RedisServerPath
	// ErrNoRedisServer: redis-server is not on PATH.
	ErrNoRedisServer = server.ErrNoRedisServer
	// ErrSpawnUnsupported: this platform cannot spawn redis-server (Windows).
	ErrSpawnUnsupported = server.ErrSpawnUnsupported
	// ErrPauseUnsupported: this platform cannot pause redis-server (Windows).
	ErrPauseUnsupported = server.ErrPauseUnsupported
)
