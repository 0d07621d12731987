// Package libs measures the Go lock libraries people ship — go-redsync/redsync, bsm/redislock
// and rueidis's rueidislock — as lockbench strategies, through thin adapters over the real
// libraries at pinned versions. Importing it (blank) registers them; `--strategy all` runs
// the lock core's own strategies only, so these are asked for by name.
//
// The adapters measure the libraries as shipped: each library's own defaults (retries,
// backoff, token format, scripts, client) unless a lockbench option maps cleanly onto one of
// its options — the ttl onto its expiry, the acquire timeout onto the context of its acquire,
// --watchdog onto lockbench's renewal through the library's own Extend/Refresh. Info.Applies
// says which options a strategy honours; the others are ignored. A variant a library's
// documentation offers its users (redislock's linear and exponential backoffs, redsync over
// several masters) is a strategy of its own, so that a run names exactly what it measured.
//
// They are honest adapters: they send no Redis command of their own on the lock's path (a
// renewal is the library's Extend or Refresh, sent only with --watchdog), and the benchmarks
// of this package show what they add per acquire in time and allocations next to calling the
// library directly.
//
// redsync and redislock drive go-redis v9, which enters the binary only through this
// package: the lock core (package strategies) imports rueidis alone. The go-redis clients
// are made from the run's rueidis options (Options.Connect, NodeConnect) — same servers,
// credentials, TLS, database and fault proxy — and closed with the strategy. rueidislock
// gets a rueidis client of its own built from the same options, as its LockerOption asks.
package libs
