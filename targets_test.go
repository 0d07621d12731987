package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/redistest"
	"github.com/lockbench/lockbench/internal/testbin"
	"github.com/lockbench/lockbench/profiles"
	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/workload"
)

// runJSON runs lockbench in-process with --format json and decodes the summary.
func runJSON(t *testing.T, args ...string) (*report.Summary, int, string) {
	t.Helper()
	code, stdout, stderr := cli(append(args, "--format", "json", "-q")...)
	return decodeRun(t, args, code, []byte(stdout), stderr)
}

// decodeRun decodes the JSON summary of a run that exited code: nil for an exit other than
// 0, 4 (unsafe) or 6 (inconclusive), and for an inconclusive run whose reason is more than a
// short count of acquires. A run bounded in time gets as many acquires as the machine lets
// it: a starved one (load 30 on 2 cores) can see 1, which makes its verdict
// "inconclusive: only 1 acquired" (report.MinAcquiredToJudge). That says nothing of what most
// of these tests check (the target a run used, its events, its files), so the run comes
// back; a test that wants a verdict checks it, as it did before the count made one
// inconclusive. Every other reason (denied commands, an unanswered probe) stays a failure.
func decodeRun(t *testing.T, args []string, code int, stdout []byte, stderr string) (*report.Summary, int, string) {
	t.Helper()
	if code != exitOK && code != exitUnsafe && code != exitInconclusive {
		return nil, code, stderr
	}
	if err := checkResultSchema(stdout); err != nil {
		t.Fatalf("%v: output breaks the JSON contract: %v", args, err)
	}
	var s report.Summary
	if err := json.Unmarshal(stdout, &s); err != nil {
		t.Fatal(err)
	}
	if code == exitInconclusive {
		for _, r := range s.Results {
			if report.IsInconclusive(r.Verdict) && !onlyFewAcquired.MatchString(r.Verdict) {
				return nil, code, stderr
			}
		}
		t.Logf("%v: inconclusive only for want of acquires on a busy machine: %s", args, stderr)
	}
	return &s, code, stderr
}

// onlyFewAcquired is the verdict of a run whose one reason to be inconclusive is its count
// of acquires (report.Inconclusive).
var onlyFewAcquired = regexp.MustCompile(`^inconclusive: only [0-9]+ acquired \(a verdict needs [0-9]+\)$`)

// runBinaryJSON is runJSON through the lockbench binary (built without -race): for runs of
// thousands of goroutines, and runs whose faults must land on time (pauses against a ttl),
// where the race detector's cost would be most of a busy machine's time; and for the runs that reconnect ZooKeeper sessions holding watches, where go-zookeeper v1.0.4 races
// with itself (conn.go:614 against conn.go:849; go-zookeeper/zk#35, never merged) and the
// race detector would fail the test for the library's fault, not lockbench's.
func runBinaryJSON(t *testing.T, args ...string) (*report.Summary, int, string) {
	t.Helper()
	cmd := exec.Command(binary(t), append(args, "--format", "json", "-q")...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	code := 0
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			t.Fatal(err)
		}
		code = exit.ExitCode()
	}
	return decodeRun(t, args, code, stdout.Bytes(), stderr.String())
}

// pauseLength finds the d= of a process-pause fault spec.
var pauseLength = regexp.MustCompile(`^process-pause:.*\bd=([0-9.]+[a-zµ]+)`)

// Every built-in profile runs to completion, shortened, on the target it implies: through
// the binary, all at once (their phases mostly wait on holds and pauses), and without the
// race detector's cost on the thousands of goroutines some of them start. The profiles that
// spawn other lock services run in TestE2EServiceProfilesRun, the longest in
// e2e_profiles_test.go.
func TestE2EEveryBuiltinProfileRuns(t *testing.T) {
	t.Parallel()
	redistest.Require(t)
	for _, p := range profiles.Builtins() {
		prof, err := profiles.Load(p.Name)
		if err != nil {
			t.Fatal(err)
		}
		if profileSpawnsServices(prof) || slices.Contains(longProfiles, p.Name) {
			continue
		}
		t.Run(p.Name, func(t *testing.T) {
			t.Parallel()
			runBuiltinProfile(t, prof)
		})
	}
}

// runBuiltinProfile runs the built-in profile prof, shortened, through the binary, with
// live added to its arguments, and checks that each of its phases ran.
func runBuiltinProfile(t *testing.T, prof *profiles.Profile, live ...string) {
	t.Helper()
	name := prof.Name
	// Shortened, but long enough for a few of the longest holds to finish.
	window := 300 * time.Millisecond
	holds := []profiles.Value{}
	if v, ok := prof.Lookup("hold"); ok {
		holds = append(holds, v)
	}
	for _, ph := range prof.Phases {
		for _, v := range ph.Values {
			if v.Key == "hold" {
				holds = append(holds, v)
			}
		}
	}
	// A fixed hold ends when it says: one and a margin is enough. A random one,
	// three times its mean.
	var longestHold time.Duration
	for _, v := range holds {
		var h workload.Hold
		if err := h.Set(v.Value); err == nil {
			if h.Kind == workload.HoldFixed {
				window = max(window, min(3*h.Min, h.Min+time.Second))
			} else {
				window = max(window, 3*h.MeanDuration())
			}
			longestHold = max(longestHold, h.MeanDuration())
		}
	}
	// A process pause can freeze every first holder of a phase's few keys at once:
	// the window must outlast a pause and a hold, or it may see no cycle end at all.
	for _, f := range slices.Concat(prof.Faults, slices.Concat(func() [][]profiles.Value {
		var all [][]profiles.Value
		for _, ph := range prof.Phases {
			all = append(all, ph.Faults)
		}
		return all
	}()...)) {
		if m := pauseLength.FindStringSubmatch(f.Value); m != nil {
			if d, err := time.ParseDuration(m[1]); err == nil {
				window = max(window, d+longestHold)
			}
		}
	}
	// Hundreds of workers starting at once (thousands on zipf-hot keys) queue for a
	// while before the first cycles complete — on a loaded machine (CI runs every package
	// at once) longer than a short window, and longer than 1.5 s for flash-sale's 2000 at
	// load 37. And with thousands the first may still be waiting when the window ends: a
	// window longer than one acquire timeout sees every attempt begun before it end in it.
	warmup := "0"
	if v, ok := prof.Lookup("workers"); ok {
		n, _ := strconv.Atoi(v.Value)
		// Fifty redlock contenders split their votes on five masters: at load 29 none
		// of them had a grant in a 300ms window without a warm-up.
		if topo, _ := prof.Lookup("topology"); n >= 100 || n >= 50 && topo.Value == "redlock" {
			warmup = "1s"
		}
		if at, ok := prof.Lookup("acquire-timeout"); ok && n >= 1000 {
			if d, err := time.ParseDuration(at.Value); err == nil {
				window = max(window, d+500*time.Millisecond)
			}
		}
	}
	// Each worker on etcd or ZooKeeper sets up its session in round trips through their
	// consensus: fifty on one key did nothing in a second's warm-up and a second measured
	// at load 30 (a JVM starved). A second of warm-up, and 2.5 s measured at least. Even
	// then fifty ZooKeeper sessions on 1000 keys (services' many-keys) saw nothing end in
	// 3.5 s at load 30 (and pg-advisory's fifty on one key at load 23): the profile's
	// acquire timeout (5s) outlasts warm-up and window, so an attempt still waiting on a
	// starved server ends after the run. A worker's attempts follow one another, each ended
	// within the acquire timeout: with one under half the window, the first attempt a worker
	// begins in the window (at most a timeout after it opens) ends in it, acquired or timed
	// out. A third of the window.
	var acquireTimeout []string
	if profileSpawnsServices(prof) {
		window, warmup = max(window, 2500*time.Millisecond), "1s"
		acquireTimeout = []string{"--acquire-timeout", (window / 3).Round(time.Millisecond).String()}
	}
	// rueidislock's first acquires on a busy machine can outlast a short window: its waiters
	// sleep until the key changes (nothing of 100 ended in 300ms beside two busy loops). An
	// acquire timeout shorter than the window makes every attempt begun in it end in it,
	// acquired or timed out.
	args := []string{"run", "--profile", name, "--duration", window.String(), "--warmup", warmup}
	if name == "libraries" || strings.HasPrefix(filepath.Base(name), "libraries-") { // whole, or a part (splitPhases)
		args = []string{"run", "--profile", name, "--duration", max(window, 1500*time.Millisecond).String(), "--warmup", warmup, "--acquire-timeout", "1s"}
	}
	// A shortened profile run checks that each phase runs, which shows at a rate as well as
	// in a closed loop. Closed, every phase took the cores for its whole window: workers on a
	// hot key retry at once (token's wait, redislock's callers), workers on many keys loop as
	// fast as Redis answers (many-keys holds nothing: 7 CPU-s for its five phases; at 2000/s,
	// 3). At profileRate a window of 300ms still sees some 60 acquires begin.
	var rate []string
	if !paced(prof) {
		rate = []string{"--rate", profileRate}
	}
	s, code, stderr := runBinaryJSON(t, slices.Concat(args, acquireTimeout, rate, live)...)
	if s == nil {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want := max(len(prof.Phases), 1)
	if len(prof.Phases) == 0 {
		if v, ok := prof.Lookup("strategy"); ok {
			want = len(strings.Split(v.Value, ","))
		}
	}
	if len(s.Results) != want || s.Config.Profile != name || s.Target.Mode != "spawned" {
		t.Fatalf("%d results (want %d), profile %q, target %+v", len(s.Results), want, s.Config.Profile, s.Target)
	}
	for _, r := range s.Results {
		if r.Acquired == 0 && r.Timeouts == 0 && r.Errors == 0 {
			t.Errorf("%s %s: nothing happened", r.Strategy, r.Label)
		}
	}
}

// profileRate is the rate of the shortened profile runs that set none of their own.
const profileRate = "200"

// paced reports whether prof sets a rate, at its top level or in a phase.
func paced(prof *profiles.Profile) bool {
	_, ok := prof.Lookup("rate")
	return ok || slices.ContainsFunc(prof.Phases, func(ph profiles.Phase) bool {
		return slices.ContainsFunc(ph.Values, func(v profiles.Value) bool { return v.Key == "rate" })
	})
}

// profileSpawnsServices reports whether a profile runs a strategy on etcd, ZooKeeper or
// PostgreSQL.
func profileSpawnsServices(prof *profiles.Profile) bool {
	names := []string{}
	if v, ok := prof.Lookup("strategy"); ok {
		names = strings.Split(v.Value, ",")
	}
	for _, ph := range prof.Phases {
		names = append(names, ph.Strategy)
	}
	return slices.ContainsFunc(names, onService)
}

// onService reports whether the strategy name runs on etcd, ZooKeeper or PostgreSQL.
func onService(name string) bool {
	return strings.HasPrefix(name, "etcd-") || strings.HasPrefix(name, "zk-") || strings.HasPrefix(name, "pg-")
}

func TestProfileErrorsExit2NamingIt(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		profile string
		mention []string
	}{
		{"no-such-profile", []string{`unknown profile "no-such-profile"`, "quickstart"}},
		{write("typo.yaml", "workers: 10\nwokers: 20\n"), []string{"line 2", `"wokers"`, "workers"}},
		{write("type.yaml", "strategy: token\nworkers: lots\n"), []string{"line 2", "workers", "whole number"}},
		{write("value.yaml", "strategy: token\nhold: forever\n"), []string{"line 2", "hold", "uniform:MIN..MAX"}},
		{write("fault.yaml", "faults: [\"meteor:p=1\"]\n"), []string{"line 1", "meteor", "holder-pause"}},
		{write("zero.yaml", "strategy: token\nworkers: 0\n"), []string{"zero.yaml", "line 2", "--workers 0", "at least 1"}},
		{write("warmup.yaml", "strategy: token\nwarmup: -1s\n"), []string{"line 2", "--warmup -1s"}},
		{write("phasezero.yaml", "duration: 1s\nphases:\n  - strategy: token\n    keys: 0\n"), []string{"line 4", "--keys 0"}},
		{write("phasetypo.yaml", "duration: 1s\nphases:\n  - strategy: token\n  - strategy: tokn\n"), []string{"phasetypo.yaml", "line 4", `"tokn"`, "fenced"}},
		// A value the strategy refuses, found when the run is validated: at its own line.
		{write("nottl.yaml", "strategy: token\nttl: 0s\n"), []string{"nottl.yaml", "line 2", "token needs a ttl"}},
		{write("phasenottl.yaml", "duration: 1s\nphases:\n  - strategy: token\n    ttl: 1s\n  - strategy: fenced\n    ttl: 0s\n"), []string{"line 6", "fenced needs a ttl"}},
	} {
		code, _, stderr := cli("run", "--profile", tc.profile, "-q")
		if code != exitUsage {
			t.Errorf("--profile %s: exit %d, want 2; %s", tc.profile, code, stderr)
		}
		for _, m := range tc.mention {
			if !strings.Contains(stderr, m) {
				t.Errorf("--profile %s: stderr should mention %q: %s", tc.profile, m, stderr)
			}
		}
	}
}

// A flag on the command line beats the profile; an absent one never does.
func TestE2EFlagOverridesProfile(t *testing.T) {
	t.Parallel()
	redistest.Require(t)
	s, code, stderr := runJSON(t, "run", "--profile", "quickstart", "--strategy", "token", "--workers", "7",
		"--duration", "200ms", "--warmup", "0")
	if s == nil {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	prof, _ := profiles.Load("quickstart")
	keys, _ := prof.Lookup("keys")
	if len(s.Results) != 1 || s.Results[0].Workers != 7 || strconv.Itoa(s.Results[0].Keys) != keys.Value {
		t.Fatalf("want 1 token phase with 7 workers and the profile's %s keys: %+v", keys.Value, s.Results)
	}
}

func TestE2ERedlockSpawnsFiveMastersAndClusterWorks(t *testing.T) {
	t.Parallel()
	redistest.Require(t)
	// 10 workers, not the default 100: a hundred contenders' split votes can take the whole
	// short window on a loaded machine before the first grant.
	s, code, stderr := runBinaryJSON(t, "run", "--strategy", "redlock,token", "--workers", "10", "--duration", "1s", "--warmup", "0")
	if s == nil {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if s.Target.Mode != "spawned" || s.Target.Topology != "redlock" || len(s.Target.Addrs) != 5 || s.Results[0].Acquired == 0 {
		t.Fatalf("redlock without --redis: target %+v, results %+v", s.Target, s.Results)
	}
	s, code, stderr = runBinaryJSON(t, "run", "--topology", "cluster", "--strategy", "token,fair,fenced", "--keys", "100",
		"--duration", "1s", "--warmup", "0")
	if s == nil {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if s.Target.Topology != "cluster" || len(s.Target.Addrs) != 3 {
		t.Fatalf("--topology cluster: target %+v", s.Target)
	}
	for _, r := range s.Results {
		if r.Acquired == 0 || r.Verdict != "safe" {
			t.Errorf("%s on a cluster: %d acquired, %s", r.Strategy, r.Acquired, r.Verdict)
		}
	}
}

func TestE2EFailOnUnsafeExits3(t *testing.T) {
	t.Parallel()
	redistest.Require(t)
	// A holder paused past its ttl: set-nx-del lets the next one in (seed 004).
	s, code, stderr := runJSON(t, "run", "--strategy", "set-nx-del", "--fault", "holder-pause:p=0.5,d=300ms",
		"--ttl", "100ms", "--workers", "8", "--duration", "1s", "--warmup", "0", "--fail-on-unsafe")
	if code != exitUnsafe || s == nil || !strings.HasPrefix(s.Results[0].Verdict, "UNSAFE") {
		t.Fatalf("exit %d (want %d), stderr %s", code, exitUnsafe, stderr)
	}
	if !strings.Contains(stderr, "UNSAFE") {
		t.Errorf("stderr should say which phase was unsafe: %s", stderr)
	}
}

// buildOnce builds lockbench once per test binary run (testbin.Lockbench).
var buildOnce = sync.OnceValues(testbin.Lockbench)

func binary(t *testing.T) string {
	t.Helper()
	bin, err := buildOnce()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// children returns the pids whose parent is pid.
func children(pid int) []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...; comm may contain spaces, so split after the last ')'.
		fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(fields) > 1 && fields[1] == strconv.Itoa(pid) {
			out = append(out, child)
		}
	}
	return out
}

// alive reports whether a process with that id exists (signal 0 checks without sending).
func alive(pid int) bool {
	p, err := os.FindProcess(pid)
	return err == nil && p.Signal(syscall.Signal(0)) == nil
}

// running is a lockbench process a test watches: its output as it comes (the lines it prints
// are the events the test waits for), and its end.
type running struct {
	cmd            *exec.Cmd
	stdout, stderr *syncBuffer
	exited         chan struct{} // closed when it has ended; err is then Wait's
	err            error
}

// startBinary starts the lockbench binary with args. It is killed, if still running, when
// the test ends.
func startBinary(t *testing.T, args ...string) *running {
	t.Helper()
	return startCommand(t, exec.Command(binary(t), args...))
}

func startCommand(t *testing.T, cmd *exec.Cmd) *running {
	t.Helper()
	p := &running{cmd: cmd, stdout: &syncBuffer{}, stderr: &syncBuffer{}, exited: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.stdout, p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.err = cmd.Wait()
		p.stdout.Close()
		p.stderr.Close()
		close(p.exited)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-p.exited
	})
	return p
}

// wait waits up to within for the process to end, and reports whether it did.
func (p *running) wait(within time.Duration) bool {
	select {
	case <-p.exited:
		return true
	case <-time.After(within):
		return false
	}
}

// awaitLive waits for the first line of a run started with --live -: the run is past its
// set-up (its servers are up) and one second into its first phase, however loaded the
// machine. It fails the test when the run ends or is stuck first.
func (p *running) awaitLive(t *testing.T) {
	t.Helper()
	if _, ok := p.stdout.awaitLine(2*time.Minute, func(string) bool { return true }); !ok {
		t.Fatalf("no second of the first phase reported live; stderr: %s", p.stderr.String())
	}
}

// waitUntil checks cond until it holds, up to within (generous: a bound for what is stuck,
// not a measure), and reports whether it came to hold. For states that send no event, as
// processes that are not this one's children.
func waitUntil(within time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}

// interruptMidRun starts lockbench with args, waits for the first second of its first phase,
// checks that it has spawned at least want processes, sends SIGINT, and checks that it
// exits with the interrupted code, writes its report, and leaves none of its children
// behind.
func interruptMidRun(t *testing.T, want int, args ...string) *report.Summary {
	t.Helper()
	out := filepath.Join(t.TempDir(), "report.json")
	p := startBinary(t, append(args, "--live", "-", "--out", out)...)
	p.awaitLive(t)
	kids := children(p.cmd.Process.Pid)
	if len(kids) < want {
		t.Fatalf("lockbench spawned %s, want %d processes; stderr: %s", describeProcs(kids), want, p.stderr.String())
	}
	_ = p.cmd.Process.Signal(syscall.SIGINT)
	if !p.wait(2 * time.Minute) {
		t.Fatalf("still running 2 minutes after SIGINT; stderr: %s", p.stderr.String())
	}
	if exitStatus(p.err) != exitInterrupted {
		t.Fatalf("exit: %v, want %d; stderr: %s", p.err, exitInterrupted, p.stderr.String())
	}
	for _, pid := range kids {
		if alive(pid) {
			t.Errorf("spawned process %d survived lockbench", pid)
			if p, err := os.FindProcess(pid); err == nil {
				_ = p.Kill()
			}
		}
	}
	s, err := readSummary(out)
	if err != nil || !s.Interrupted {
		t.Fatalf("want an interrupted JSON report: %v, %+v", err, s)
	}
	return s
}

func TestE2ECtrlCStopsSpawnedServers(t *testing.T) {
	t.Parallel()
	redistest.Require(t)
	s := interruptMidRun(t, 5, "run", "--strategy", "redlock", "--duration", "1m", "--format", "json")
	if s.Target.Topology != "redlock" || len(s.Results) != 1 {
		t.Fatalf("report: %+v", s.Target)
	}
}

// Ctrl-C while a server is frozen by a fault: the server must still be stopped (a stopped
// process ignores SIGTERM until continued) and the proxies' listeners closed.
func TestE2ECtrlCMidFaultLeavesNothing(t *testing.T) {
	t.Parallel()
	redistest.Require(t)
	s := interruptMidRun(t, 1, "run", "--strategy", "token", "--duration", "1m", "--warmup", "0",
		"--fault", "redis-pause:node=0,at=500ms,d=30s", "--fault", "latency:node=0,ms=1", "--format", "json")
	events := s.Results[0].Events
	if len(events) == 0 {
		t.Fatalf("no fault events in the interrupted report")
	}
}

// Three lockbench processes meet at a barrier, run together on one Redis, and their results
// merge into one whose histogram is theirs combined.
func TestE2EThreeProcessesMerge(t *testing.T) {
	t.Parallel()
	srv, _ := redistest.Server(t)
	files := runNodes(t, srv.Addr, "merge-test", 3, "--strategy", "token,fenced", "--workers", "20",
		"--keys", "10", "--rate", "200", "--duration", "1s", "--warmup", "200ms")
	merged := mergeFiles(t, files)
	var parts []*report.Summary
	for _, f := range files {
		s, err := readSummary(f)
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, s)
	}
	for i, r := range merged.Results {
		var acquired uint64
		for _, p := range parts {
			acquired += p.Results[i].Acquired
		}
		h, err := report.DecodeHistogram(r.Histograms.Acquire)
		if err != nil {
			t.Fatal(err)
		}
		if r.Acquired != acquired || uint64(h.TotalCount()) != acquired || merged.Merged != 3 {
			t.Errorf("%s: merged %d acquired (histogram %d), the processes %d", r.Strategy, r.Acquired, h.TotalCount(), acquired)
		}
		if r.Safety.Overlaps != 0 {
			t.Errorf("%s: three processes on the same keys overlapped %d times", r.Strategy, r.Safety.Overlaps)
		}
	}
	// They contended for the same keys: each process saw handoffs from the others' releases
	// only if they shared keys, and the barrier keys are the only ones left.
	c := redistest.Client(t, srv.Addr)
	keys, _ := c.Do(context.Background(), c.B().Keys().Pattern("lockbench:merge-test:*").Build()).AsStrSlice()
	for _, k := range keys {
		if !strings.Contains(k, ":barrier:") {
			t.Errorf("left behind: %s", k)
		}
	}
}

// mergeFiles runs report merge on files and checks its JSON against the contract.
func mergeFiles(t *testing.T, files []string) report.Summary {
	t.Helper()
	code, stdout, stderr := cli(append([]string{"report", "merge"}, files...)...)
	if code != exitOK {
		t.Fatalf("merge: exit %d: %s", code, stderr)
	}
	var merged report.Summary
	if err := json.Unmarshal([]byte(stdout), &merged); err != nil {
		t.Fatal(err)
	}
	if err := checkResultSchema([]byte(stdout)); err != nil {
		t.Errorf("merged: %v", err)
	}
	return merged
}

// runNodes runs n lockbench processes that meet at barrier on the Redis at addr, each
// with args, and returns their JSON result files. Machines never start together: each
// process starts once the one before it says it waits at the barrier.
func runNodes(t *testing.T, addr, barrier string, n int, args ...string) []string {
	t.Helper()
	dir := t.TempDir()
	files := make([]string, n)
	nodes := make([]*running, n)
	for i := range n {
		files[i] = filepath.Join(dir, fmt.Sprintf("node%d.json", i+1))
		nodes[i] = startBinary(t, append([]string{"run", "--redis", addr, "--node", fmt.Sprintf("%d/%d", i+1, n),
			"--barrier", barrier, "--format", "json", "--out", files[i], "-q"}, args...)...)
		if i < n-1 {
			if _, ok := nodes[i].stderr.awaitLine(2*time.Minute, func(l string) bool { return strings.Contains(l, "waiting up to") }); !ok {
				t.Fatalf("node %d never said it waits at the barrier: %v: %s", i+1, nodes[i].err, nodes[i].stderr.String())
			}
		}
	}
	for i, p := range nodes {
		if !p.wait(5 * time.Minute) {
			t.Fatalf("node %d still running after 5 minutes: %s", i+1, p.stderr.String())
		}
		// A node alone may acquire too little for a verdict of its own (exit 6,
		// inconclusive: one worker that the other process starved), where the merge,
		// which the tests judge, has enough: its file is written all the same.
		var exit *exec.ExitError
		if p.err != nil && !(errors.As(p.err, &exit) && exit.ExitCode() == exitInconclusive && strings.Contains(p.stderr.String(), "inconclusive")) {
			t.Fatalf("node %d: %v: %s", i+1, p.err, p.stderr.String())
		}
	}
	return files
}

// Two processes, one worker each, hold a lock three times longer than its ttl: neither
// process's own oracle sees an overlap (it has one worker), and the merge must — from the
// histories the processes keep. With a ttl longer than the hold the same pair merges safe:
// the check across processes reports nothing within the clocks' uncertainty.
func TestE2ETwoProcessesOverlapAcrossTheBarrier(t *testing.T) {
	t.Parallel()
	srv, _ := redistest.Server(t)
	merge := func(ttl, strategies string) []report.Result {
		files := runNodes(t, srv.Addr, "pair-ttl-"+ttl, 2, "--strategy", strategies, "--ttl", ttl, "--hold", "300ms",
			"--keys", "1", "--workers", "1", "--duration", "2s", "--warmup", "200ms")
		merged := mergeFiles(t, files)
		for _, f := range files {
			s, err := readSummary(f)
			if err != nil {
				t.Fatal(err)
			}
			if data, err := os.ReadFile(f); err != nil || checkResultSchema(data) != nil {
				t.Errorf("%s: %v %v", f, err, checkResultSchema(data))
			}
			for _, r := range s.Results {
				if r.Safety.Overlaps != 0 || r.History == nil || (r.Strategy == "fair" && r.History.Sections == 0) {
					t.Fatalf("%s: %s: one worker alone saw %d overlaps, kept history %+v", f, r.Strategy, r.Safety.Overlaps, r.History)
				}
			}
		}
		return merged.Results
	}
	lapsed := merge("100ms", "token")[0]
	if c := lapsed.Safety.CrossProcess; c == nil || c.Overlaps == 0 || !strings.HasPrefix(lapsed.Verdict, "UNSAFE") {
		t.Errorf("ttl 100ms, hold 300ms: merged verdict %q, cross-process check %+v: want UNSAFE with overlaps", lapsed.Verdict, c)
	}
	// token may let one process starve the other (its worker takes the lock again the moment
	// it lets go); fair queues them, so the lock passes from process to process every hold:
	// the closest two sections of different processes ever come in a correct lock.
	for _, held := range merge("10s", "token,fair") {
		if c := held.Safety.CrossProcess; c == nil || c.Overlaps != 0 || c.Sections == 0 || held.Verdict != "safe" {
			t.Errorf("%s, ttl 10s, hold 300ms: merged verdict %q, cross-process check %+v: want safe, 0 overlaps", held.Strategy, held.Verdict, c)
		}
	}
}

// A profile's phase overrides the profile's own top level; the command line overrides both.
func TestE2EProfilePhaseOverridesItsTopLevel(t *testing.T) {
	t.Parallel()
	redistest.Require(t)
	path := filepath.Join(t.TempDir(), "p.yaml")
	body := "workers: 2\nhold: 5ms\nphases:\n  - strategy: token\n    label: short\n  - strategy: token\n    label: long\n    hold: 60ms\n"
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	holds := func(args ...string) []int64 {
		s, code, stderr := runBinaryJSON(t, append([]string{"run", "--profile", path, "--duration", "1s", "--warmup", "0"}, args...)...)
		if s == nil {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		var out []int64
		for _, r := range s.Results {
			out = append(out, r.LatencyUS.Hold.P50/1000)
		}
		return out
	}
	// A hold lasts at least its setting, and overshoots by however late its sleep wakes,
	// which a busy machine makes longer: each phase's p50 is judged against the settings it
	// could wrongly have had instead: at least its own, below the next larger one.
	within := func(got []int64, want ...[2]int64) bool {
		if len(got) != len(want) {
			return false
		}
		for i := range got {
			if got[i] < want[i][0] || got[i] >= want[i][1] {
				return false
			}
		}
		return true
	}
	// The profile alone: 5ms, not the default 0s nor the other phase's 60ms; then 60ms.
	if got := holds(); !within(got, [2]int64{5, 60}, [2]int64{60, 1000}) {
		t.Errorf("hold p50 per phase: %v ms, want [5 60]", got)
	}
	// --hold 10ms over both: not the profile's 5ms, nor the phase's own 60ms.
	if got := holds("--hold", "10ms"); !within(got, [2]int64{10, 60}, [2]int64{10, 60}) {
		t.Errorf("with --hold 10ms: %v ms, want [10 10]", got)
	}
}

// Without redis-server on PATH the run embeds a fake and the output's first line says so.
// Through the binary, whose PATH is its own: the test runs beside the others.
func TestE2EEmbeddedWhenNoRedisServer(t *testing.T) {
	t.Parallel()
	goBin := filepath.Dir(mustLookPath(t, "go"))
	cmd := exec.Command(binary(t), "run", "--strategy", "token,fair", "--duration", "300ms", "--warmup", "0", "-q")
	cmd.Env = append(os.Environ(), "PATH="+goBin) // redis-server is not there; the last PATH counts
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	// The point is what the output says of the fake, not the verdict: on a starved machine
	// fair may acquire once in 300ms, and its phase is then inconclusive (exit 6, ci28
	// beside two busy loops); the run still prints its report.
	var exit *exec.ExitError
	if err := cmd.Run(); err != nil && !(errors.As(err, &exit) && exit.ExitCode() == exitInconclusive && strings.Contains(errOut.String(), "inconclusive")) {
		t.Fatalf("%v: %s", err, errOut.String())
	}
	stdout := out.String()
	first, _, _ := strings.Cut(stdout, "\n")
	if !strings.Contains(first, "embedded") || !strings.Contains(first, "not a Redis server") || !strings.Contains(first, "install redis-server") {
		t.Fatalf("first line should say the numbers come from an in-process fake and how to get a real one: %q", first)
	}
	if !strings.Contains(stdout, "embedded single") {
		t.Errorf("target line should say embedded: %s", stdout)
	}
}

func mustLookPath(t *testing.T, name string) string {
	p, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("%s not on PATH", name)
	}
	return p
}

// The sweep of the issue, shortened: a 600ms pause breaks a 200ms ttl and not a 5s one, and
// the recommendation names a safe ttl.
func TestE2ESweepFindsTheSmallestSafeTTL(t *testing.T) {
	t.Parallel()
	redistest.Require(t)
	code, stdout, stderr := cli("sweep", "--param", "ttl=200ms,1s,5s", "--fault", "holder-pause:p=0.05,d=600ms",
		"--strategy", "token", "--duration", "2s", "--warmup", "0", "--format", "json", "-q")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var s report.Summary
	if err := json.Unmarshal([]byte(stdout), &s); err != nil {
		t.Fatal(err)
	}
	if len(s.Results) != 3 || s.Sweep == nil || s.Sweep.Param != "ttl" {
		t.Fatalf("want 3 phases of a ttl sweep: %+v", s.Sweep)
	}
	if r := s.Results[0]; r.ParamValue != "200ms" || r.Safety.Overlaps == 0 {
		t.Errorf("ttl 200ms under 600ms pauses: want overlaps, got %d (%s)", r.Safety.Overlaps, r.Verdict)
	}
	if r := s.Results[2]; r.ParamValue != "5s" || r.Safety.Overlaps != 0 {
		t.Errorf("ttl 5s: want no overlap, got %d", r.Safety.Overlaps)
	}
	if len(s.Recommendations) != 1 || !strings.Contains(s.Recommendations[0], "smallest safe ttl") {
		t.Errorf("recommendations: %q", s.Recommendations)
	}
}

// report compare flags a regression and, with --fail-on-regression, exits 4.
func TestReportCompareFailsOnRegression(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, rate float64) string {
		s := &report.Summary{Tool: "lockbench", Version: "test", StartedAt: time.Now().UTC(),
			Results: []report.Result{{Strategy: "token", Acquired: uint64(rate) * 10, AcquireRate: rate, DurationS: 10, Verdict: "safe"}}}
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := report.JSON(f, s); err != nil {
			t.Fatal(err)
		}
		return f.Name()
	}
	a, b := write("a.json", 10000), write("b.json", 7000)
	if code, stdout, stderr := cli("report", "compare", a, b); code != exitOK || !strings.Contains(stdout, "token") {
		t.Fatalf("compare without --fail-on-regression: exit %d, %s %s", code, stdout, stderr)
	}
	code, _, stderr := cli("report", "compare", "--fail-on-regression", a, b)
	if code != exitRegression || !strings.Contains(stderr, "regression") {
		t.Fatalf("a 30%% drop in acquire rate: exit %d (want %d), %s", code, exitRegression, stderr)
	}
	if code, _, _ := cli("report", "compare", "--fail-on-regression", b, a); code != exitOK {
		t.Fatalf("an improvement must not fail: exit %d", code)
	}
}

// pitfallsPhase is the command line that runs one phase of the pitfalls profile alone: the
// profile's top-level settings, then the phase's own.
func pitfallsPhase(t *testing.T, strategy, label string) []string {
	t.Helper()
	prof, err := profiles.Load("pitfalls")
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(prof.Phases, func(ph profiles.Phase) bool { return ph.Strategy == strategy && ph.Label == label })
	if i < 0 {
		t.Fatalf("the pitfalls profile has no phase %s %q", strategy, label)
	}
	ph := prof.Phases[i]
	args := []string{"run", "--strategy", ph.Strategy}
	for _, v := range append(slices.Clone(prof.Values), ph.Values...) {
		if v.Key != "strategy" && v.Key != "reentry" {
			args = append(args, "--"+v.Key, v.Value)
		}
	}
	for _, f := range append(slices.Clone(prof.Faults), ph.Faults...) {
		args = append(args, "--fault", f.Value)
	}
	return args
}

// The pitfalls profile's redlock restart, as the profile declares it: three of five masters
// come back empty while holders are inside, and the restarted majority grants their locks
// again (antirez's persistence caveat, Kleppmann's critique).
func TestE2EPitfallsRedlockRestartIsUnsafe(t *testing.T) {
	t.Parallel()
	redistest.Require(t)
	args := pitfallsPhase(t, "redlock", "restart 3 of 5")
	if !slices.ContainsFunc(args, func(a string) bool { return strings.Contains(a, "restart=") }) {
		t.Fatalf("the phase restarts no node: %q", args)
	}
	// The holders that entered before the kill must still be inside when the masters are
	// back: the profile's 1500ms hold lets them out first when a loaded machine takes
	// seconds to restart three redis-servers (verdict safe, in 2 runs of 4 at load 30).
	// Held past the end of the phase, they are inside whenever the restart ends in it.
	s, code, stderr := runBinaryJSON(t, append(args, "--duration", "3s", "--hold", "5s")...)
	if s == nil {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if r := s.Results[0]; !strings.HasPrefix(r.Verdict, "UNSAFE") || r.Safety.Overlaps == 0 {
		t.Errorf("redlock with 3 of 5 masters restarted empty: verdict %q, %d overlaps; want UNSAFE", r.Verdict, r.Safety.Overlaps)
	}
}

// The pitfalls profile's release pause: get-del's GET finds its own token, the lease lapses
// during the pause, and its DEL removes the next holder's lock; token's compare-and-delete
// script removes nothing that is not its own.
//
// The oracle counts a misdelete when the holder whose lock the late DEL removed finds it
// gone on its own release, made in time, after the late release has come back and named it
// a suspect: counted only when both sides are seen in that order, never guessed. A starved
// machine delays the late release's return past the victim's 20 ms hold, and few misdeletes
// are then seen (0 in 110 acquires at load 19). So get-del's phase runs again until it has
// shown one, given a generous bound; a get-del that removed no one else's lock would never
// show one.
func TestE2EPitfallsGetDelMisdeletes(t *testing.T) {
	t.Parallel()
	redistest.Require(t)
	phase := func(strategy string) report.Result {
		t.Helper()
		s, code, stderr := runBinaryJSON(t, append(pitfallsPhase(t, strategy, "release-pause"), "--duration", "2s", "--warmup", "0")...)
		if s == nil {
			t.Fatalf("%s: exit %d: %s", strategy, code, stderr)
		}
		return s.Results[0]
	}
	var tries []string
	for giveUp := time.Now().Add(2 * time.Minute); ; {
		r := phase("get-del")
		if r.Safety.Misdeletes > 0 && r.Acquired > 0 {
			break
		}
		tries = append(tries, fmt.Sprintf("%d misdeletes in %d acquires, verdict %q", r.Safety.Misdeletes, r.Acquired, r.Verdict))
		if time.Now().After(giveUp) {
			t.Fatalf("get-del under release pauses past the ttl, run for 2 minutes: %s; want misdeletes", strings.Join(tries, "; "))
		}
	}
	if len(tries) > 0 {
		t.Logf("get-del showed misdeletes in run %d; before: %s", len(tries)+1, strings.Join(tries, "; "))
	}
	if r := phase("token"); r.Safety.Misdeletes != 0 || r.Acquired == 0 {
		t.Errorf("token under release pauses past the ttl: %d misdeletes in %d acquires, verdict %q; want none",
			r.Safety.Misdeletes, r.Acquired, r.Verdict)
	}
}

// A spawned server killed and restarted empty loses the fencing counter: INCR starts again
// at 1, the resource refuses every legitimate new holder — fence regressions — and the
// phase must not pass as safe (fenced).
func TestE2EFenceResetIsNotFenced(t *testing.T) {
	t.Parallel()
	redistest.Require(t)
	s, code, stderr := runJSON(t, "run", "--strategy", "fenced", "--fault", "kill:node=0,at=600ms,restart=50ms",
		"--duration", "1500ms", "--warmup", "0", "--workers", "10", "--keys", "4", "--hold", "5ms")
	if s == nil {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if r := s.Results[0]; r.Safety.FenceRegressions == 0 || !strings.HasPrefix(r.Verdict, "UNSAFE") {
		t.Errorf("fencing counter lost with the server: %d fence regressions, verdict %q; want regressions and UNSAFE",
			r.Safety.FenceRegressions, r.Verdict)
	}
}

// --max-errors: a run whose Redis died early on fails with exit 5 instead of passing CI; a
// limit it stays within does not. A quiet machine sees a couple of hundred errors in the
// 700ms after the kill; one at load 34 saw no more than 10 (a starved in-process run makes
// few attempts): the limit is 3, and the dead server has 1.7 s to be tried.
func TestE2EMaxErrorsExits5(t *testing.T) {
	t.Parallel()
	redistest.Require(t)
	args := []string{"run", "--strategy", "token", "--workers", "4", "--fault", "kill:node=0,at=300ms",
		"--duration", "2s", "--warmup", "0", "--acquire-timeout", "200ms", "-q"}
	code, _, stderr := cli(append(args, "--max-errors", "3")...)
	if code != exitErrors || !strings.Contains(stderr, "--max-errors 3") {
		t.Errorf("a dead server with --max-errors 3: exit %d, want %d; %s", code, exitErrors, stderr)
	}
	code, _, stderr = cli(append(args, "--max-errors", "100%")...)
	if code != exitOK {
		t.Errorf("--max-errors 100%%: exit %d, want 0; %s", code, stderr)
	}
}

// run --state FILE uses the topology `target up --state FILE` started, not the default one.
func TestE2ERunUsesTheStateFileItIsGiven(t *testing.T) {
	t.Parallel()
	redistest.Require(t)
	state := filepath.Join(t.TempDir(), "st.json")
	if code, out, stderr := cli("target", "up", "--state", state); code != exitOK {
		t.Fatalf("target up: exit %d: %s %s", code, out, stderr)
	}
	t.Cleanup(func() { cli("target", "down", "--state", state) })
	st, err := os.ReadFile(state)
	if err != nil {
		t.Fatal(err)
	}
	s, code, stderr := runJSON(t, "run", "--state", state, "--duration", "300ms", "--warmup", "0", "--workers", "2")
	if s == nil {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if s.Target.Mode != "spawned" || len(s.Target.Addrs) == 0 || !strings.Contains(string(st), s.Target.Addrs[0]) {
		t.Errorf("run --state %s used %+v, not the servers of that state file:\n%s", state, s.Target, st)
	}
}
