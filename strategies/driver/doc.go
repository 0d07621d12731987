// Package driver runs a lock written in any language as a lockbench strategy, through the
// driver protocol (docs/drivers.md): `--strategy driver:CMD` starts CMD (split on spaces, no
// shell) once per lockbench process — a --procs fleet is N drivers — and speaks
// newline-delimited JSON on its stdin and stdout. The driver says hello (its name, its
// library's version, what it supports), then answers acquire, release, renew, abandon and
// ping requests by id, so that many workers' requests interleave on one pipe; it reaches the
// run's Redis through LOCKBENCH_REDIS_* environment variables.
//
// lockbench's workers stay the oracle's source of truth: a worker enters the resource once
// the driver said granted and leaves it before it asks to release, as with every Go
// strategy. The faults reach a driver as they reach a Go lock: holder-pause stretches the
// hold, holder-crash abandons the lease (the driver forgets it without releasing it and
// stops renewing it), process-pause stops the driver's whole process group (SIGSTOP, then
// SIGCONT, through Hooks.OnPause), and the node faults act on Redis.
//
// A driver that dies, hangs (no reply within a request's timeout plus Grace) or writes a
// line the protocol does not know breaks its strategy: every call returns the same one-line
// *Error naming the driver, and its process group is killed. The driver runs in a process
// group of its own that dies with lockbench (the parent-death signal on Linux), and Close
// kills whatever is left of the group.
package driver
