package workload

import "github.com/redis/rueidis"

// NewRedisBackend makes the Redis Backend this package's tests drive. services/redis has
// it, and imports workload: only an external test file can reach it (redis_test.go).
var NewRedisBackend func(rueidis.Client) Backend

func redisBackend(c rueidis.Client) Backend { return NewRedisBackend(c) }
