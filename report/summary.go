// Package report turns a run's Summary into what a person or a program reads: a table,
// JSON, CSV, Markdown, HdrHistogram .hgrm and .hlog files.
//
// A Summary is plain data. Nothing live (no clients, no histograms being recorded) crosses
// into this package; the engine fills a Summary when a phase ends and hands it over.
// The JSON field names are a contract (docs/output.md, "JSON results"), described by the JSON
// Schema in schema/result.json, which `go generate ./schema` derives from these types. Every
// name carries its unit (acquire_rate_per_s, p99_us). Add fields freely; a rename or a
// removal raises SchemaVersion, and the old name stays readable for a release (legacy.go).
package report

import "time"

// Summary is the result of one lockbench run.
type Summary struct {
	Tool string `json:"tool" jsonschema:"enum=lockbench"` // always "lockbench"
	// SchemaVersion is the version of schema/result.json the document follows; the JSON
	// reporter always writes SchemaVersion (the constant). 0 when read from a file written
	// before the schema was versioned.
	SchemaVersion int `json:"schema_version"`
	// Kind is run, sweep or capacity. A Summary built without one is a run; the JSON
	// reporter always writes it.
	Kind        string    `json:"kind" jsonschema:"enum=run,enum=sweep,enum=capacity"`
	Version     string    `json:"version"`
	StartedAt   time.Time `json:"started_at"` // RFC3339 in JSON
	Interrupted bool      `json:"interrupted"`
	Target      Target    `json:"target"`
	Config      Config    `json:"config"`
	Results     []Result  `json:"results"`
	// Notes are lines a reader must see with the numbers (e.g. that the target is an
	// in-process fake); reporters print them.
	Notes []string `json:"notes,omitempty"`

	// Node is "I/N" when this is one of N processes of a multi-machine run (--node).
	Node string `json:"node,omitempty"`
	// Merged counts the result files `report merge` combined into this one (0 = not merged).
	Merged int `json:"merged,omitempty"`

	// Sweep: the parameter varied, one phase per value per strategy; Recommendations are
	// lines derived from the data (e.g. the smallest safe ttl).
	Sweep           *Sweep   `json:"sweep,omitempty"`
	Recommendations []string `json:"recommendations,omitempty"`

	// Capacity: the answer per strategy of `lockbench capacity`, with every step it ran.
	Capacity []Capacity `json:"capacity,omitempty"`
}

// The kinds of Summary (Summary.Kind). An empty Kind is a run.
const (
	KindRun      = "run"      // phases of the configured strategies
	KindSweep    = "sweep"    // one phase per swept value per strategy; Sweep is set
	KindCapacity = "capacity" // a capacity search per strategy; Capacity is set
)

// Sweep describes a parameter sweep.
type Sweep struct {
	Param  string   `json:"param"`  // ttl | watchdog | wait | workers | keys | hold | rate | read-ratio | permits | lock-set
	Values []string `json:"values"` // as given on the command line
}

// Capacity is one strategy's capacity search: the highest offered rate that met the SLO.
type Capacity struct {
	Strategy string         `json:"strategy"`
	SLO      string         `json:"slo"` // e.g. "p99<=5ms timeouts<=0.1%"
	Steps    []CapacityStep `json:"steps"`
	// MaxRate is the highest offered acquisitions/s that passed; 0 when none did.
	MaxRate float64 `json:"max_rate_per_s"`
	// CPUPercentAtMax is Redis CPU (% of one core) at MaxRate.
	CPUPercentAtMax float64 `json:"cpu_percent_at_max"`
	// Bound is what stopped the search, read on the first step that failed above MaxRate:
	// redis-cpu (the server, the capacity asked for), lockbench-cpu (the load generator's
	// cores, or the machine's when a fleet has more Ps than it has cores), host-cpu (the
	// machine both share, or its other work), lockbench-scheduling (the load generator's own
	// delays: its goroutines queued for its cores, their scheduling latency p99 at least half
	// the acquire p99; or they started late, the start delay p99 at least a quarter of the
	// acquire p99 or as much as the p99 missed its objective by), workers (every worker busy: arrivals dropped), contention (acquires waiting for holders of the same keys),
	// latency (no resource saturated: the round trip and the waits broke the SLO), none
	// (every step passed), or "" (no step failed to read it from: an interrupted search).
	Bound string `json:"bound" jsonschema:"enum=redis-cpu,enum=lockbench-cpu,enum=host-cpu,enum=lockbench-scheduling,enum=workers,enum=contention,enum=latency,enum=none,enum="`
	// BoundBy says it with the figures, e.g. "Redis CPU 96% of a core" or "lockbench: 2.0
	// of 2 cores busy — add --procs or machines".
	BoundBy string `json:"bound_by,omitempty"`
	// ClientBound is true when lockbench or its machine, not the server, was the bound:
	// MaxRate is then what this client could offer, a lower bound of the server's capacity.
	ClientBound bool `json:"client_bound"`
}

// CapacityStep is one open-loop step of a capacity search.
type CapacityStep struct {
	Stage           string  `json:"stage"`          // ramp | bisect
	Offered         float64 `json:"offered_per_s"`  // acquisitions/s asked for
	Achieved        float64 `json:"achieved_per_s"` // acquisitions/s done
	Dropped         uint64  `json:"dropped"`
	P99US           int64   `json:"p99_us"`
	TimeoutRate     float64 `json:"timeout_ratio"` // timeouts / (acquired + timeouts), 0..1
	RedisCPUPercent float64 `json:"redis_cpu_percent"`
	// LockbenchCPUPercent is lockbench's own CPU over the step's window in % of its
	// LockbenchCores (GOMAXPROCS): 100 = every core it may use busy. HostCPUPercent is the
	// machine's, all processes, in % of its cores (0 when not measured).
	LockbenchCPUPercent float64 `json:"lockbench_cpu_percent"`
	LockbenchCores      int     `json:"lockbench_cores"`
	HostCPUPercent      float64 `json:"host_cpu_percent"`
	HostCores           int     `json:"host_cores"`
	// HostStealPercent is the part of HostCPUPercent the hypervisor took (steal), as in
	// ClientCost.
	HostStealPercent float64 `json:"host_steal_percent,omitempty"`
	// RoundTripUS is the step's release p50: one round trip to the server under the step's
	// load for a lock whose release is one command (token, fenced, fair's script).
	RoundTripUS int64 `json:"round_trip_us"`
	// HandoffRatio is the share of acquires that waited for another worker's release of
	// their key (handoffs / acquired): contention on the keys.
	HandoffRatio float64 `json:"handoff_ratio"`
	// SchedP99US and SchedMeanUS are how long lockbench's goroutines waited runnable for a
	// processor over the step's window, in µs (ClientCost's): queueing inside the client.
	SchedP99US  float64 `json:"sched_latency_p99_us"`
	SchedMeanUS float64 `json:"sched_latency_mean_us"`
	// StartDelayP99US is how late lockbench ran a goroutine that slept until a due instant,
	// as an arrival does, p99 over the step's window, in µs (ClientCost's).
	StartDelayP99US float64 `json:"start_delay_p99_us,omitempty"`
	Keys            int     `json:"keys"`
	Pass            bool    `json:"pass"`
	Reason          string  `json:"reason,omitempty"` // why it failed: "p99 7.1ms > 5ms", "achieved 91% of offered"
}

// Target says where the numbers were measured.
type Target struct {
	Mode         string   `json:"mode"`     // spawned | external | embedded
	Topology     string   `json:"topology"` // single | redlock | sentinel | cluster
	Addrs        []string `json:"addrs"`
	RedisVersion string   `json:"redis_version"`
	// Note says why the numbers may not mean what they seem, e.g. that the embedded target
	// is an in-process fake, not a Redis server. Reporters for people print it first.
	Note string `json:"note,omitempty"`
}

// Config is the resolved workload, as run.
type Config struct {
	Strategies       []string `json:"strategies"`
	Workers          int      `json:"workers"`
	Rate             float64  `json:"rate_per_s"` // acquisitions/s offered; 0 = closed loop
	MaxInflight      int      `json:"max_inflight,omitempty"`
	Keys             int      `json:"keys"`
	KeyDist          string   `json:"key_dist"` // uniform | zipf:S
	Hold             string   `json:"hold"`     // e.g. "0s", "uniform:1ms..5ms", "exp:2ms"
	Reentry          int      `json:"reentry"`
	DurationS        float64  `json:"duration_s"`
	WarmupS          float64  `json:"warmup_s"`
	AcquireTimeoutMS int64    `json:"acquire_timeout_ms"`
	TTLMS            int64    `json:"ttl_ms"`   // 0 = none (--ttl 0)
	Watchdog         string   `json:"watchdog"` // off | auto | duration
	Wait             string   `json:"wait"`
	Faults           []string `json:"faults,omitempty"`
	Profile          string   `json:"profile,omitempty"`
	OnLost           string   `json:"on_lost,omitempty"` // abort; omitted for continue
	// ReadRatio, Permits and LockSet are the run's --read-ratio, --permits and --lock-set,
	// omitted at their defaults (0, 1, 1); a phase's own are in its result.
	ReadRatio float64 `json:"read_ratio,omitempty"`
	Permits   int     `json:"permits,omitempty"`
	LockSet   int     `json:"lock_set,omitempty"`
}

// Result is one phase: one strategy driven for the configured duration.
type Result struct {
	Strategy string `json:"strategy"`
	// Label tells phases of the same strategy apart (a sweep value, a profile's phase label);
	// empty for a plain run. ParamValue is the swept parameter's value for this phase.
	Label      string  `json:"label,omitempty"`
	ParamValue string  `json:"param_value,omitempty"`
	Wait       string  `json:"wait"`
	TTLMS      int64   `json:"ttl_ms"`      // 0 = none (--ttl 0)
	WatchdogMS int64   `json:"watchdog_ms"` // resolved renewal interval, 0 = off
	DurationS  float64 `json:"duration_s"`  // measured time, warm-up excluded
	Workers    int     `json:"workers"`
	Keys       int     `json:"keys"`
	// Capacity is how many the strategy lets hold one key at once, as the oracle judged it:
	// "" for one (a mutex), "semaphore" (Permits), "rw" (readers together, a writer alone)
	// or "set" (one per key, LockSet keys per acquire).
	Capacity string `json:"capacity,omitempty" jsonschema:"enum=semaphore,enum=rw,enum=set"`
	// Permits is how many holders one key of a semaphore admits (--permits); omitted for
	// other locks.
	Permits int `json:"permits,omitempty"`
	// ReadRatio is the fraction of acquires that were reads (--read-ratio), for a rw-lock;
	// omitted when 0.
	ReadRatio float64 `json:"read_ratio,omitempty"`
	// LockSet is how many keys each acquire took at once (--lock-set), for a lock set;
	// omitted for one.
	LockSet int `json:"lock_set,omitempty"`

	Acquired    uint64  `json:"acquired"`
	AcquireRate float64 `json:"acquire_rate_per_s"` // acquired / duration_s
	OfferedRate float64 `json:"offered_rate_per_s,omitempty"`
	Timeouts    uint64  `json:"timeouts"` // acquire gave up after --acquire-timeout
	Errors      uint64  `json:"errors"`   // Redis or network failures
	Dropped     uint64  `json:"dropped"`  // open loop: arrivals that found no free worker
	// ErrorsByKind splits Errors by what went wrong; nil when there were none.
	ErrorsByKind *ErrorKinds `json:"errors_by_kind,omitempty"`
	// FirstErrors is the first error of each kind the phase saw, warm-up and drain included,
	// in the order the kinds first appeared: what the hints name (the missing ACL right, the
	// frozen server). Omitted without errors.
	FirstErrors []PhaseError `json:"first_errors,omitempty"`
	// Own lists the lock settings this phase's lock keeps its own way rather than
	// lockbench's (a library or lock service measured as shipped): "wait" (then Wait is
	// "own") and "watchdog" (its session's keep-alive, or none). Omitted when it takes both.
	Own []string `json:"own,omitempty"`
	// Source is where the phase's lock comes from, as its catalog entry says: for a library
	// (a Go library, a driver's, from its hello) the library and its version as it ran, e.g.
	// "npm redlock 4.2.0 on ioredis 5.4.1"; for lockbench's own locks, the seed article or
	// Redisson file they follow. Omitted when unknown.
	Source string `json:"source,omitempty"`

	LatencyUS Latencies `json:"latency_us"`
	// HoldErrorUS is how much later than asked the measured holds ended (the hold the
	// critical section was asked to last, --hold, against the time it lasted; never
	// earlier), in µs; omitted when nothing held for a time (--hold 0).
	HoldErrorUS *Percentiles `json:"hold_error_us,omitempty"`
	Safety      Safety       `json:"safety"`
	// Verdict is what the oracle concluded (see Judge), or "inconclusive: why" when the run
	// cannot support a verdict (see Verdict).
	Verdict string `json:"verdict"`
	// Faults are the fault specs active in this phase; Events is what they did, when.
	Faults []string  `json:"faults,omitempty"`
	Events []Event   `json:"events,omitempty"`
	Redis  RedisCost `json:"redis"`
	// Client is what the window cost lockbench itself, and the machine it ran on: the
	// side of the measurement a load generator must show, so that a client-bound figure
	// is never read as the server's.
	Client   ClientCost `json:"client"`
	Fairness Fairness   `json:"fairness"`
	Renewals uint64     `json:"renewals"`
	Timeline []Second   `json:"timeline"`

	// History is every critical section of a multi-process run (--node), for report merge
	// to find overlaps between the processes; nil otherwise.
	History *History `json:"history,omitempty"`

	// Histograms carries the phase's full HDR histograms, encoded, so that results of
	// several processes can be merged exactly (never by averaging percentiles).
	Histograms Histograms `json:"histograms"`

	// Intervals are the per-second histograms of the measured window, for the .hlog interval
	// log (WriteHDRFiles) and for `report merge` to write the merged one. Compressed, they
	// cost about 1.5 KB a second (four histograms of a contended phase).
	Intervals []Interval `json:"intervals,omitempty"`

	// Error is set when the phase could not run to its end (e.g. Redis went away).
	Error string `json:"error,omitempty"`
	// Interrupted marks the phase that was running when the run was stopped (Ctrl-C): its
	// numbers cover only the time it ran.
	Interrupted bool `json:"interrupted,omitempty"`
	// Notes are lines about this phase a reader needs with its numbers (e.g. the first error
	// seen, a fault that fired).
	Notes []string `json:"notes,omitempty"`
}

// ErrorKinds counts a phase's failed lock-server calls (acquires, releases) by kind. The
// kinds add up to Result.Errors.
type ErrorKinds struct {
	// Denied: the server refused the command to this user (NOPERM: an ACL without the
	// command, the key or the channel; NOSCRIPT where scripting is denied).
	Denied uint64 `json:"denied"`
	// Timeout: a server call got no answer in time (an i/o timeout, a deadline on the call).
	Timeout uint64 `json:"timeout"`
	// Unreachable: the connection was refused, reset or closed.
	Unreachable uint64 `json:"unreachable"`
	// Server: any other error reply of the server (e.g. OOM, READONLY, a script's error).
	Server uint64 `json:"server"`
	// Other: none of the above (a client-side failure).
	Other uint64 `json:"other"`
}

// Error kinds (PhaseError.Kind), one per field of ErrorKinds.
const (
	ErrorDenied      = "denied"
	ErrorTimeout     = "timeout"
	ErrorUnreachable = "unreachable"
	ErrorServer      = "server"
	ErrorOther       = "other"
)

// Add counts one error of kind.
func (k *ErrorKinds) Add(kind string, n uint64) {
	switch kind {
	case ErrorDenied:
		k.Denied += n
	case ErrorTimeout:
		k.Timeout += n
	case ErrorUnreachable:
		k.Unreachable += n
	case ErrorServer:
		k.Server += n
	default:
		k.Other += n
	}
}

// PhaseError is the first error of one kind a phase saw.
type PhaseError struct {
	Kind string `json:"kind" jsonschema:"enum=denied,enum=timeout,enum=unreachable,enum=server,enum=other"`
	// Op is what failed: acquire, release, or probe (lockbench's own read of the lock
	// server at the window's end, which a frozen or unreachable server does not answer).
	Op string `json:"op" jsonschema:"enum=acquire,enum=release,enum=probe"`
	// Right is the ACL right a denied command lacked, as ACL SETUSER takes it: "+@scripting"
	// (EVAL, EVALSHA, a script), "&lockbench:*" (a channel: SUBSCRIBE, PUBLISH),
	// "~lockbench:*" (a key), else the command's own "+name"; "" for other kinds.
	Right   string `json:"right,omitempty"`
	Message string `json:"message"`
}

// Latencies are in microseconds. Acquire is measured from the intended start in open loop.
type Latencies struct {
	Acquire Percentiles `json:"acquire"`
	Release Percentiles `json:"release"`
	// Handoff is release of key K by one worker -> the acquire of K by another worker that
	// was already waiting when the release happened.
	Handoff Percentiles `json:"handoff"`
	Hold    Percentiles `json:"hold"`
}

// Percentiles of one histogram, in microseconds.
type Percentiles struct {
	Count uint64  `json:"count"`
	P50   int64   `json:"p50"`
	P90   int64   `json:"p90"`
	P99   int64   `json:"p99"`
	P999  int64   `json:"p999"`
	Max   int64   `json:"max"`
	Mean  float64 `json:"mean"`
}

// Safety is what the oracle saw, independently of the strategy's own claims.
type Safety struct {
	// Overlaps: a worker entered a key's critical section past the key's capacity: while
	// another was inside (a mutex, every key of a lock set), while the semaphore's permits
	// were all inside, or, for a rw-lock, a reader beside a writer or a writer beside anyone.
	Overlaps uint64 `json:"overlaps"`
	// StaleFences: a fenced write carried a token lower than the last accepted; the resource
	// refused it.
	StaleFences uint64 `json:"stale_fences"`
	// LostLeases: a release found the lease already gone (expired or taken over).
	LostLeases uint64 `json:"lost_leases"`
	// StuckKeys: locks left in Redis without a ttl at the phase's end (a deadlock waiting to
	// happen, e.g. setnx-expire after a crash between its two commands).
	StuckKeys uint64 `json:"stuck_keys"`
	// UnsafeReentries: re-entries (--reentry) granted to a holder that another worker had
	// superseded meanwhile — its lease had lapsed, yet the strategy let it go on as if it had
	// held the lock all along (seed 001).
	UnsafeReentries uint64 `json:"unsafe_reentries,omitempty"`

	// StaleWrites: writes the resource accepted from a holder that another had superseded
	// (someone entered the key after it while it was still inside): the harm an overlap
	// does. A fencing strategy's overlap is harmless only when this stays 0.
	StaleWrites uint64 `json:"stale_writes"`
	// FenceRegressions: fenced writes the resource refused from a holder nobody had
	// superseded — the fence went backwards, e.g. the counter was lost with a restarted
	// server. The resource then refuses legitimate holders and may accept stale ones.
	FenceRegressions uint64 `json:"fence_regressions"`
	// FenceReuses: a write carrying the same fence as the last one the resource accepted,
	// from another lease: two leases were handed one token.
	FenceReuses uint64 `json:"fence_reuses"`
	// Misdeletes: releases that succeeded while a holder that entered after the releasing
	// one was inside: they removed that holder's lock (seed 004's blind DEL after the
	// lease expired). Counted at the release's start.
	Misdeletes uint64 `json:"misdeletes"`
	// Aborted: holders that found their lease gone before their last write and abandoned
	// it (--on-lost abort).
	Aborted uint64 `json:"aborted"`
	// CrashedHolders: holders that died inside their critical section in the measured
	// window (holder-crash): they never released, and their renewals stopped with them.
	CrashedHolders uint64 `json:"crashed_holders,omitempty"`
	// BlockedAfterCrash: how long each dead holder kept its key from everyone, from the
	// crash to the next acquire of that key by anyone; nil without crashes.
	BlockedAfterCrash *CrashBlocked `json:"blocked_after_crash_ms,omitempty"`
	// LeakedPermits: a semaphore's permits that holders who died (holder-crash, warm-up
	// included) took and nothing gave back: at the phase's end, once the live holders had
	// released and the dead ones' leases (one ttl) could have run out, the permits missing
	// on each key a death touched, never more than the deaths there. Like stuck keys, a
	// deadlock: the key admits fewer holders for good.
	LeakedPermits uint64 `json:"leaked_permits,omitempty"`

	// MaxHolders is the most holders the oracle saw inside one key at once: 1 for a mutex
	// that held (2 or more is an overlap), up to the permits for a semaphore, readers and a
	// writer together for a rw-lock. A merged result's is the largest of its inputs' and
	// of what the cross-process check saw. 0 when nothing was acquired.
	MaxHolders uint64 `json:"max_holders,omitempty"`
	// MaxReaders and MaxWriters split MaxHolders for a rw-lock (capacity rw): the most
	// readers, and the most writers, inside one key at once. Readers share; more than one
	// writer, or a writer beside a reader, is an overlap. Omitted for other locks.
	MaxReaders uint64 `json:"max_readers,omitempty"`
	MaxWriters uint64 `json:"max_writers,omitempty"`

	// Fencing tells that the strategy issues fencing tokens, which the resource checks.
	Fencing bool `json:"fencing"`
	// CrossProcess is the check of a merged multi-process run across the processes'
	// histories; nil for one process.
	CrossProcess *CrossCheck `json:"cross_process,omitempty"`
}

// CrashBlocked is how long dead holders kept their keys from everyone, in milliseconds.
// A key nobody acquired again before the phase ended is stuck: its blocked time is known
// only to be at least StuckFor, and it is not in P50 and Max.
type CrashBlocked struct {
	// Recovered is how many crashed keys someone acquired again; P50 and Max are over them,
	// from the crash to that acquire. A merged result's P50 is the largest of its inputs'.
	Recovered uint64 `json:"recovered"`
	P50       int64  `json:"p50"`
	Max       int64  `json:"max"`
	// Stuck is how many crashed keys nobody acquired again before the phase ended, and
	// StuckFor the longest any of them had been blocked by then.
	Stuck    uint64 `json:"stuck"`
	StuckFor int64  `json:"stuck_for"`
}

// Longest is the longest a crash is known to have blocked its key: Max, or StuckFor when a
// stuck key had been blocked longer by the phase's end.
func (c *CrashBlocked) Longest() int64 {
	if c == nil {
		return 0
	}
	return max(c.Max, c.StuckFor)
}

// Event is something a fault did during a phase.
type Event struct {
	TS    float64 `json:"t_s"`   // seconds since the measured window began (negative: warm-up)
	Fault string  `json:"fault"` // the fault spec
	What  string  `json:"what"`  // e.g. "node 2 paused for 2s", "node 0 killed"
}

// RedisCost is the phase's INFO deltas over every node, lockbench's own INFO calls excluded,
// divided by successful acquires.
type RedisCost struct {
	// Measured is false when the target gave no INFO (e.g. the embedded server): the other
	// fields are then zero, not free.
	Measured           bool    `json:"measured"`
	CommandsPerAcquire float64 `json:"commands_per_acquire"`
	CPUUSPerAcquire    float64 `json:"cpu_us_per_acquire"`
	BytesPerAcquire    float64 `json:"bytes_per_acquire"` // network in + out
	Commands           uint64  `json:"commands"`
	CPUUS              uint64  `json:"cpu_us"` // used_cpu_sys + used_cpu_user
	NetInBytes         uint64  `json:"net_in_bytes"`
	NetOutBytes        uint64  `json:"net_out_bytes"`
	CPUPercent         float64 `json:"cpu_percent"` // of one core, over the phase
	// CommandsSplit is true when Commands is also split by kind, from Redis's INFO
	// commandstats; the four fields below are absent for other services and for a Redis that
	// refused COMMAND INFO. Redis counts a script's call and the commands it runs alike in
	// Commands: a lock whose acquire is a script around SET costs one command more per
	// attempt than one that sends the SET bare, with the same data commands.
	CommandsSplit bool `json:"commands_split,omitempty"`
	// DataCommandsPerAcquire are the commands on keys per acquire (SET, GET, DEL, HSET,
	// PEXPIRE, ...: what COMMAND INFO gives keys), counted also when a script ran them.
	// Commands on no key (PUBLISH, PING, CLIENT, SCRIPT LOAD) are neither data commands nor
	// script calls.
	DataCommandsPerAcquire float64 `json:"data_commands_per_acquire,omitempty"`
	// ScriptCallsPerAcquire are the script and function calls per acquire: EVAL, EVALSHA,
	// EVAL_RO, EVALSHA_RO, FCALL, FCALL_RO.
	ScriptCallsPerAcquire float64 `json:"script_calls_per_acquire,omitempty"`
	DataCommands          uint64  `json:"data_commands,omitempty"` // over the window, as DataCommandsPerAcquire
	ScriptCalls           uint64  `json:"script_calls,omitempty"`  // over the window, as ScriptCallsPerAcquire
}

// ClientCost is lockbench's own CPU over the measured window (user + system, from
// getrusage), with the cores it may use (GOMAXPROCS), and the machine's CPU over the same
// window (every process on it: Redis when it runs there, and other work). A merged result
// sums the processes' CPU and cores, and averages the machines'.
type ClientCost struct {
	// Measured is false where the process's CPU time cannot be read (not Linux): the other
	// fields are then zero, not free.
	Measured        bool    `json:"measured"`
	CPUUS           uint64  `json:"cpu_us"`
	Cores           int     `json:"cores"`       // GOMAXPROCS (summed over a merge's processes)
	CPUPercent      float64 `json:"cpu_percent"` // of Cores: 100 = every core lockbench may use was busy
	CPUUSPerAcquire float64 `json:"cpu_us_per_acquire"`
	// HostCPUPercent is the machine's CPU busy, all processes, over the window, in % of
	// HostCores; 0 with HostCores 0 when it could not be read.
	HostCPUPercent float64 `json:"host_cpu_percent"`
	HostCores      int     `json:"host_cores"`
	// HostStealPercent is the part of HostCPUPercent the hypervisor took (steal: this
	// virtual machine's CPUs were ready to run while the host ran other work), in % of
	// HostCores; absent on bare metal and where it could not be read. Steal slows Redis and
	// lockbench alike, and changes from minute to minute: figures measured under it move
	// with it.
	HostStealPercent float64 `json:"host_steal_percent,omitempty"`
	// SchedP99US and SchedMeanUS are how long lockbench's goroutines waited runnable for a
	// processor over the window (the Go runtime's /sched/latencies, which samples them), in
	// µs: the client's own queueing, which its CPU percentage does not show. Every
	// acquire waits at least once (its reply wakes it). A merge keeps the worst process's
	// (each one has its own scheduler). 0 where not measured.
	SchedP99US  float64 `json:"sched_latency_p99_us"`
	SchedMeanUS float64 `json:"sched_latency_mean_us"`
	// StartDelayP99US is how late lockbench ran a goroutine that slept until a due instant
	// (a probe that sleeps 1-3ms at a time over an open-loop window, as an arrival
	// waits for its start), p99 in µs: the client's own delay between when a request was due
	// and when its goroutine ran, timers and run queue together. The scheduling latency
	// above misses the timers: an idle processor runs them from an epoll wait of whole
	// milliseconds. A merge keeps the worst process's; 0 in a closed loop.
	StartDelayP99US float64 `json:"start_delay_p99_us,omitempty"`
}

// BusyCores is how many cores lockbench kept busy on average over the window.
func (c ClientCost) BusyCores() float64 { return c.CPUPercent / 100 * float64(c.Cores) }

// Fairness of acquisitions across workers.
type Fairness struct {
	Jain float64 `json:"jain"` // Jain's index: 1 = perfectly even, 1/n = one worker got all
	// MinPerWorker and MaxPerWorker are the extremes of per-worker acquisitions; Starved
	// counts workers that acquired nothing in the measured window.
	MinPerWorker uint64 `json:"min_per_worker"`
	MaxPerWorker uint64 `json:"max_per_worker"`
	Starved      int    `json:"starved"`
	// Workers, Sum and SumSquares of per-worker acquisitions let `report merge` compute the
	// exact Jain index over every process's workers.
	Workers    int     `json:"workers"`
	Sum        float64 `json:"sum"`
	SumSquares float64 `json:"sum_squares"`
	// Processes is fairness across the processes of a merged run (report merge, --procs);
	// nil for one process.
	Processes *ProcessFairness `json:"processes,omitempty"`
}

// ProcessFairness is fairness across the processes of a merged run: what a fleet of services
// sees when a wait policy favours the process that holds the lock.
type ProcessFairness struct {
	// Count is how many processes ran workers in the phase.
	Count int `json:"count"`
	// Jain is Jain's index over the processes' acquires per worker (their acquire counts
	// when each ran as many workers): 1 = every process got its share, 1/count = one got all.
	Jain float64 `json:"jain"`
	// MinAcquired and MaxAcquired are the fewest and the most acquires of one process.
	MinAcquired uint64 `json:"min_acquired"`
	MaxAcquired uint64 `json:"max_acquired"`
	// Starved counts processes that acquired nothing in the measured window while another
	// process did and their own workers waited: their acquires timed out, or were still
	// waiting when the window closed (no timeout and no error). A process whose attempts all
	// failed with errors, or whose phase did not finish, is failing, not starved.
	Starved int `json:"starved"`
	// Sum and SumSquares of the processes' acquires per worker let a merge of merged results
	// compute the exact Jain index over all their processes.
	Sum        float64 `json:"sum"`
	SumSquares float64 `json:"sum_squares"`
}

// Second is one point of the per-second timeline.
type Second struct {
	TS       float64 `json:"t_s"` // seconds since the measured window began, at the end of this second
	Acquired uint64  `json:"acquired"`
	P99US    int64   `json:"p99_us"`
	Overlaps uint64  `json:"overlaps"`
	Timeouts uint64  `json:"timeouts"`
	Errors   uint64  `json:"errors"`
	// Events are the fault events of this second, as "fault: what".
	Events []string `json:"events,omitempty"`
}

// Histograms are HdrHistogram's compressed V2 encoding as base64 text (what hdrhistogram-go's
// Histogram.Encode(V2CompressedEncodingCookieBase) returns; the form HdrHistogram's own
// tools read), values in µs. Empty when the histogram recorded nothing.
type Histograms struct {
	Acquire string `json:"acquire"`
	Release string `json:"release"`
	Handoff string `json:"handoff"`
	Hold    string `json:"hold"`
	// HoldError is HoldErrorUS's histogram; omitted with it.
	HoldError string `json:"hold_error,omitempty"`
}

// Interval is one second's histograms for the .hlog file, encoded as in Histograms (values
// in µs; the .hlog has them in ns). A histogram that recorded nothing is "".
type Interval struct {
	StartMS int64  `json:"start_ms"` // Unix milliseconds
	EndMS   int64  `json:"end_ms"`   // Unix milliseconds
	Acquire string `json:"acquire,omitempty"`
	Release string `json:"release,omitempty"`
	Handoff string `json:"handoff,omitempty"`
	Hold    string `json:"hold,omitempty"`
}
