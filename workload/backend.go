package workload

import (
	"context"
	"errors"
	"time"

	"github.com/lockbench/lockbench/strategies"
)

// Backend is the lock service a run drives strategies against: what the engine needs from
// it besides the strategies themselves. Each lock service, Redis included, has its own in a package
// under services/ (services/redis, services/etcd, ...), so that workload imports no
// service's client.
//
// The engine uses a Backend per phase, never per acquire: the strategies hold the clients
// Configure gives them and talk to the service directly, so the measured path pays no
// interface call for the seam. Its methods may be called concurrently (runs in one
// process may share a Backend). A Backend owns none of its clients' lifetimes: the caller
// connects before the run and closes after it.
//
// The target block of a report (mode, topology, addresses, server version) is the caller's
// job: it knows how it reached the service, the engine does not.
//
// Backend is what every service implements; what only some have is an optional interface
// the engine discovers by type assertion, as go-ycsb discovers a DB's BatchDB: a
// multi-process run's barrier (BarrierStore) and reference clock (Clock) on the Backend,
// and the deletion of a phase's keys (Cleaner) on its Scope. Redis has all three; a
// service without them is served by Redis (Router.Default) or, for Cleaner, has nothing
// to delete.
type Backend interface {
	// Name is the service as notes and errors call it ("Redis"), e.g. in "Redis cost not
	// measured: ...".
	Name() string

	// Configure fills the service's part of the options a phase's strategy is built with
	// (for Redis: Client and Nodes, and how they were made; for another service,
	// Options.Service). The engine has set the rest (ttl, watchdog, wait,
	// hooks) and builds the strategy right after; a strategy the service cannot serve
	// (redlock without independent masters) fails there, before any phase runs.
	Configure(o *strategies.Options)

	// Scope is the part of the service one phase touches: the servers a strategy with info
	// locks on, and the keys starting with prefix. It is called once per phase, before the
	// phase starts; the servers are fixed then, so a failover during the phase shows as
	// changed servers rather than as a new set silently measured.
	Scope(info strategies.Info, prefix string) Scope
}

// BarrierStore is the optional part of a Backend that keeps the barrier's shared counters
// (Barrier). Every process of a multi-machine run reaches the same store through its own
// Backend. A Backend without it answers the barrier with ErrNoBarrier.
type BarrierStore interface {
	// Arrive adds one to the counter named key — creating it at 0 — and returns its new
	// value; the counter may be forgotten ttl after that.
	Arrive(ctx context.Context, key string, ttl time.Duration) (int64, error)
	// Arrived returns the counter's current value, and an error once it is gone.
	Arrived(ctx context.Context, key string) (int64, error)
}

// Clock is the optional part of a Backend that serves the reference clock of a
// multi-process run. A Backend without it answers the clock with ErrNoBarrier.
type Clock interface {
	// ClockSamples reads the reference clock (the one every process shares: for Redis,
	// the TIME of the barrier's server) n times in a row, on a connection of its own so
	// that no other request delays a round trip. Each sample carries this process's
	// clock just before the request was sent and just after the answer came; the engine
	// keeps the one with the shortest round trip.
	ClockSamples(ctx context.Context, n int) ([]ClockSample, error)
}

// ErrNoBarrier is what the barrier and the clock answer on a Backend that keeps neither
// (no BarrierStore, no Clock): etcd, ZooKeeper and PostgreSQL, whose runs keep them on
// Redis (Router.Default).
var ErrNoBarrier = errors.New("this lock service keeps no barrier or reference clock: a multi-process run keeps them on Redis")

// clockOf reads b's reference clock n times: ErrNoBarrier when b has none.
func clockOf(ctx context.Context, b Backend, n int) ([]ClockSample, error) {
	c, ok := b.(Clock)
	if !ok {
		return nil, ErrNoBarrier
	}
	return c.ClockSamples(ctx, n)
}

// Scope is one phase's part of a lock service: its servers and its keys. Its methods run
// outside the measured path, each once per phase: cost at the window's edges, stuck locks
// and cleanup after the workers drained.
type Scope interface {
	// StartCost reads the servers' counters as the measured window opens; stop reads them
	// again as it closes and returns what the servers spent in between, without the
	// readings' own requests. stop returns an error when the two readings cannot be
	// subtracted (a server restarted or was replaced during the window: its counters
	// started over); the error's first line becomes the phase's note, after
	// "<Name> cost not measured: ". stop is called at most once.
	StartCost(ctx context.Context) (stop func(context.Context) (Cost, error), err error)

	// StuckLocks counts the locks among the phase's keys that the service will never give
	// up by itself once every worker released what it held: for Redis, lock keys without a
	// ttl (seed 003's deadlock). isLock tells the phase's lock keys from the keys a
	// strategy derives from them (fence counters, queues), which are not locks. The count
	// is a lower bound when an error or the end of ctx cut the search short.
	StuckLocks(ctx context.Context, isLock func(key string) bool) (uint64, error)
}

// Cleaner is the optional part of a Scope whose service keeps the phase's keys after it:
// a Scope without it has nothing to delete (PostgreSQL's advisory locks live in sessions).
type Cleaner interface {
	// Cleanup deletes every key of the phase (locks left behind, fence counters, queues)
	// before ctx ends: a benchmark must not leave garbage in someone's service.
	Cleanup(ctx context.Context) error
}

// cleanup deletes s's keys when it keeps any (Cleaner).
func cleanup(ctx context.Context, s Scope) error {
	if c, ok := s.(Cleaner); ok {
		return c.Cleanup(ctx)
	}
	return nil
}

// Cost is what a lock service's servers spent during a measured window, summed over the
// servers that do the work: a Redis replica re-runs what its master ran and is not counted.
type Cost struct {
	// Servers is how many servers the sums are over; 0 means nothing was measured.
	Servers int
	// Requests are the requests the servers ran, as they count them: for Redis,
	// total_commands_processed, which counts the commands a script runs too.
	Requests uint64
	// Split is whether DataRequests and ScriptCalls were measured (Redis: INFO
	// commandstats). DataRequests are the commands on keys among Requests, counted also
	// when a script ran them; ScriptCalls the script and function calls (EVAL, EVALSHA,
	// FCALL and their _RO forms).
	Split                     bool
	DataRequests, ScriptCalls uint64
	// CPUUS is the servers' CPU time (system + user), in µs.
	CPUUS uint64
	// NetInBytes and NetOutBytes are the bytes the servers received and sent.
	NetInBytes, NetOutBytes uint64
	// Elapsed is the wall time between the readings (the longest, over the servers).
	Elapsed time.Duration
}

// ClockSample is one reading of the reference clock, bracketed by this process's clock.
type ClockSample struct {
	Sent, Got time.Time // this process's clock around the round trip
	RefUS     int64     // the reference clock, µs since the Unix epoch
}
