// Package builtin registers everything the lockbench binary ships beyond the lock core, one
// blank import each, as go-ycsb's databases do:
//
//   - the lock services (services/redis, the home service, and etcd, ZooKeeper and
//     PostgreSQL), each with its flags, its strategies and its Backend;
//   - the lock libraries people ship (redsync, redislock, rueidislock), measured as
//     strategies by name (strategies/libs). Their adapters are a package of their own so
//     that go-redis, which redsync and redislock need, stays out of the lock core; building
//     without that import shows what they cost the binary (docs/strategies.md, "Lock
//     libraries");
//   - locks in any language through the driver protocol: --strategy driver:CMD
//     (strategies/driver, docs/drivers.md).
//
// Package main imports it (register.go), and so does the schema generator (schema/gen), so
// that schema/profile.json offers every strategy `lockbench strategies` prints.
package builtin

import (
	_ "github.com/lockbench/lockbench/services/etcd"
	_ "github.com/lockbench/lockbench/services/postgres"
	_ "github.com/lockbench/lockbench/services/redis"
	_ "github.com/lockbench/lockbench/services/zookeeper"
	_ "github.com/lockbench/lockbench/strategies/driver"
	_ "github.com/lockbench/lockbench/strategies/libs"
)
