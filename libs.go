package main

// The lock libraries people ship (redsync, redislock, rueidislock), measured as strategies
// by name. Their adapters are a package of their own so that go-redis, which redsync and
// redislock need, stays out of the lock core; building without this import shows what they
// cost the binary (docs/strategies.md, "Lock libraries").
import _ "github.com/lockbench/lockbench/strategies/libs"

// Locks in any language through the driver protocol: --strategy driver:CMD (docs/drivers.md).
import _ "github.com/lockbench/lockbench/strategies/driver"
