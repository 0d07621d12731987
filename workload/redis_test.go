package workload_test

import (
	"github.com/redis/rueidis"

	"github.com/lockbench/lockbench/services/redis"
	"github.com/lockbench/lockbench/workload"
)

func init() {
	workload.NewRedisBackend = func(c rueidis.Client) workload.Backend { return redis.Backend{Client: c} }
}
