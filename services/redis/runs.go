package redis

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/rueidis"

	"github.com/lockbench/lockbench/internal/proc"
)

// A run removes its phases' keys as each phase ends (Scope.Cleanup). A run killed with
// SIGKILL cannot: keys a strategy writes without a ttl (redisson-fair's queue and timeout
// set, the semaphores' permits, getset's lock, fenced's counter) would stay forever, under
// a random prefix nobody knows. So each run registers the key prefix of every phase it
// plays in the hash RunsKey on the home Redis (field: "PREFIX\nWHERE PID", the prefix and
// the process, as the processes of a multi-process run share their prefixes; value: when
// it last said it lives, in Unix ms), and refreshes it every beatEvery while it lives.
// The next run removes the keys (SCAN MATCH *prefix*, UNLINK, on every server) of every
// registered prefix whose processes are all dead: gone from this same machine, or silent
// for longer than staleAfter. A live run's keys are never removed by another, so
// fenced's counter only grows while its run lives (a run frozen longer than staleAfter,
// as by SIGSTOP, is taken for dead).
const (
	// RunsKey is the registry of the live runs' key prefixes; it matches an ACL user's
	// ~lockbench* and expires runsTTL after the last run's heartbeat.
	RunsKey    = "lockbench:runs"
	beatEvery  = 10 * time.Second
	staleAfter = 2 * time.Minute
	runsTTL    = 7 * 24 * time.Hour
)

// runs is this process's entry in RunsKey: the prefixes of its phases, refreshed by a
// heartbeat until close.
type runs struct {
	home  rueidis.Client   // where RunsKey lives
	nodes []rueidis.Client // every client the run's keys may be written through
	me    string           // "\nWHERE PID" after the prefix in a field (see identity)

	// sent counts the commands the registry sent to home, which a phase's cost subtracts
	// (redisScope.StartCost): 2 per heartbeat.
	sent atomic.Uint64

	mu       sync.Mutex
	prefixes map[string]bool
	stop     chan struct{}
	done     chan struct{}
}

// startRuns removes the keys of dead runs, then starts this run's heartbeat. Errors (an
// ACL user denied HSET, a server that does not answer) leave the run as it was: its own
// cleanup at each phase's end is unaffected.
func startRuns(ctx context.Context, home rueidis.Client, nodes []rueidis.Client) *runs {
	r := &runs{home: home, nodes: nodes, me: "\n" + identity() + " " + strconv.Itoa(os.Getpid()),
		prefixes: map[string]bool{}, stop: make(chan struct{}), done: make(chan struct{})}
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	_, _ = SweepDeadRuns(sctx, home, nodes...)
	cancel()
	go r.loop()
	return r
}

// add registers prefix as this run's, at once (before the phase writes a key).
func (r *runs) add(prefix string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	r.prefixes[prefix] = true
	r.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	r.beat(ctx, []string{prefix})
}

// remove forgets prefix once its keys are gone (the phase's cleanup).
func (r *runs) remove(ctx context.Context, prefix string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	delete(r.prefixes, prefix)
	r.mu.Unlock()
	r.sent.Add(1)
	r.home.Do(ctx, r.home.B().Hdel().Key(RunsKey).Field(prefix+r.me).Build())
}

// commands is how many commands the registry has sent to home so far.
func (r *runs) commands() uint64 {
	if r == nil {
		return 0
	}
	return r.sent.Load()
}

// beat says that prefixes live now, and keeps RunsKey from expiring.
func (r *runs) beat(ctx context.Context, prefixes []string) {
	if len(prefixes) == 0 {
		return
	}
	now := strconv.FormatInt(time.Now().UnixMilli(), 10)
	fv := r.home.B().Hset().Key(RunsKey).FieldValue()
	for _, p := range prefixes {
		fv = fv.FieldValue(p+r.me, now)
	}
	r.sent.Add(2)
	r.home.DoMulti(ctx, fv.Build(), r.home.B().Pexpire().Key(RunsKey).Milliseconds(runsTTL.Milliseconds()).Build())
}

func (r *runs) loop() {
	defer close(r.done)
	t := time.NewTicker(beatEvery)
	defer t.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-t.C:
			r.mu.Lock()
			ps := make([]string, 0, len(r.prefixes))
			for p := range r.prefixes {
				ps = append(ps, p)
			}
			r.mu.Unlock()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			r.beat(ctx, ps)
			cancel()
		}
	}
}

// close stops the heartbeat and forgets this process's prefixes that are left: a --procs
// child's, whose keys node 1 removes, or one whose cleanup failed, which then stays
// registered under node 1 or, if it is dead, is removed by the next run.
func (r *runs) close() {
	if r == nil {
		return
	}
	close(r.stop)
	<-r.done
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.prefixes) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	fields := make([]string, 0, len(r.prefixes))
	for p := range r.prefixes {
		fields = append(fields, p+r.me)
	}
	r.home.Do(ctx, r.home.B().Hdel().Key(RunsKey).Field(fields...).Build())
}

// identity names this machine's process namespace: the kernel's boot id and the pid
// namespace, "" when unknown (then only a heartbeat older than staleAfter tells a run dead).
// Two containers on one host share the boot id but not the pid namespace.
func identity() string {
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return "-"
	}
	ns, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		return "-"
	}
	return strings.TrimSpace(string(boot)) + "/" + strings.Trim(ns, "pid:[]")
}

// deadEntry reports whether the process of a registry entry (field "PREFIX\nWHERE PID",
// value its last heartbeat in Unix ms) is dead at now: silent for longer than staleAfter,
// or gone from this machine (here, see identity). It returns the entry's prefix.
func deadEntry(field, value string, now time.Time, here string) (prefix string, dead bool) {
	prefix, who, _ := strings.Cut(field, "\n")
	ms, err := strconv.ParseInt(value, 10, 64)
	if err != nil || now.Sub(time.UnixMilli(ms)) > staleAfter {
		return prefix, true
	}
	where, pid, _ := strings.Cut(who, " ")
	if where == "" || where == "-" || where != here {
		return prefix, false
	}
	n, err := strconv.Atoi(pid)
	if err != nil || n == os.Getpid() {
		return prefix, false
	}
	s := proc.State(n)
	return prefix, s == 0 || s == 'Z'
}

// SweepDeadRuns removes the keys of the runs registered in RunsKey on home that are dead
// (see runs), on every server behind nodes (each master of a cluster, each redlock
// master; home's when nodes is empty), and their entries. It returns the prefixes it
// removed.
func SweepDeadRuns(ctx context.Context, home rueidis.Client, nodes ...rueidis.Client) ([]string, error) {
	all, err := home.Do(ctx, home.B().Hgetall().Key(RunsKey).Build()).AsStrMap()
	if err != nil || len(all) == 0 {
		return nil, err
	}
	here := identity()
	now := time.Now()
	entries := map[string]map[string]string{} // prefix -> field -> value, of dead prefixes
	alive := map[string]bool{}
	for f, v := range all {
		prefix, dead := deadEntry(f, v, now, here)
		if !dead {
			alive[prefix] = true
			continue
		}
		if entries[prefix] == nil {
			entries[prefix] = map[string]string{}
		}
		entries[prefix][f] = v
	}
	if len(nodes) == 0 {
		nodes = []rueidis.Client{home}
	}
	servers := Nodes(nodes...)
	var removed []string
	var errs []error
	for prefix, fields := range entries {
		if alive[prefix] || !strings.HasPrefix(prefix, "lockbench:") || len(prefix) <= len("lockbench:") {
			continue // one of its processes lives; or not a run's prefix: never all of lockbench*
		}
		ok := true
		for _, node := range servers {
			err := scanPrefix(ctx, node.Client, prefix, func(keys []string) {
				for _, k := range keys {
					if err := node.Client.Do(ctx, node.Client.B().Unlink().Key(k).Build()).Error(); err != nil && !isReadonly(err) {
						errs = append(errs, err)
						ok = false
					}
				}
			})
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", node.Addr, err))
				ok = false
			}
		}
		if !ok {
			continue // kept for the next run
		}
		for f, v := range fields {
			// Only if no heartbeat came since: that process lives after all.
			_ = forgetEntry.Exec(ctx, home, []string{RunsKey}, []string{f, v}).Error()
		}
		removed = append(removed, prefix)
	}
	return removed, errors.Join(errs...)
}

// isReadonly: a replica refuses to UNLINK (READONLY, or MOVED in a cluster); its master,
// scanned too, does it.
func isReadonly(err error) bool {
	var re *rueidis.RedisError
	if !errors.As(err, &re) {
		return false
	}
	_, moved := re.IsMoved()
	return moved || strings.HasPrefix(re.Error(), "READONLY")
}

// forgetEntry deletes a registry entry only if it still holds the value read: a run that
// wrote its heartbeat since is alive.
var forgetEntry = rueidis.NewLuaScript(`if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then return redis.call('HDEL', KEYS[1], ARGV[1]) end return 0`)
