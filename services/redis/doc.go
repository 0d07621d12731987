// Package redis is the Redis lock service: how lockbench reaches Redis (external servers,
// sentinel, cluster, spawned redis-server processes or the embedded fake), the state file of
// `lockbench target up`, the INFO-based cost, the Backend the engine drives Redis strategies
// through, and its registration among the lock services. The redis-server processes
// themselves are package server's.
package redis
