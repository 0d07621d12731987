// Package builtin registers everything the lockbench binary ships beyond the lock core: the
// lock services (etcd, ZooKeeper, PostgreSQL and Redis, with their strategies), the lock
// libraries measured as strategies (strategies/libs) and the driver family
// (strategies/driver). Importing it gives a program the registries the binary has, so that
// what is generated from them (schema/profile.json's strategy names, through ./schema/gen)
// offers every name `lockbench strategies` prints. A new service or adapter package gets its
// blank import here as in package main; a test in package main fails while the two differ.
package builtin

import (
	_ "github.com/lockbench/lockbench/services/etcd"
	_ "github.com/lockbench/lockbench/services/postgres"
	_ "github.com/lockbench/lockbench/services/redis"
	_ "github.com/lockbench/lockbench/services/zookeeper"
	_ "github.com/lockbench/lockbench/strategies/driver"
	_ "github.com/lockbench/lockbench/strategies/libs"
)
