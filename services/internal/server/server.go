// Package server starts, watches and stops the lock servers lockbench spawns for the other
// services (etcd, ZooKeeper, PostgreSQL), as target spawns redis-server: on free loopback
// ports, in a temporary directory, dying with lockbench however it ends, stopped by pid,
// never by name. The process control underneath (the parent-death signal on Linux, the
// watchdog process group on macOS and the BSDs, owner-recorded temporary directories and
// their sweep, free ports) is internal/proc's, shared with target. It also reads a
// spawned server's CPU time from /proc, for the cost per acquire.
package server

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/lockbench/lockbench/internal/clock"
	"github.com/lockbench/lockbench/internal/proc"
)

// ErrUnsupported is returned where the platform cannot spawn servers (Windows) or read a
// process's CPU time (anything but Linux).
var ErrUnsupported = proc.ErrUnsupported

// Spec is a server to start.
type Spec struct {
	Name string   // for errors: "etcd"
	Path string   // the binary
	Args []string // its arguments
	Dir  string   // the working directory; its log goes to Dir/<Name>.log
	Env  []string // added to the environment
	// User, when set and lockbench runs as root, is the system user the server runs as
	// (PostgreSQL refuses to run as root).
	User string
}

// Process is a started server. The node faults can kill it and start it again on the same
// data (Kill, Restart) and freeze it (Pause, Resume); its pid then changes, and every method
// speaks of the process running now.
type Process struct {
	spec Spec

	life    sync.Mutex // serializes Stop, Kill and Restart
	stopped bool       // Stop ran: the server stays down

	mu      sync.Mutex // guards the fields below for the readers (Pid, CPU, Exited, Output)
	cur     *running
	probe   func(context.Context) error // Ready's probe and timeout, for Restart
	timeout time.Duration
}

// running is one run of the server's process.
type running struct {
	cmd    *exec.Cmd
	exited chan struct{}
	log    *os.File
}

// Start starts the server and returns at once; Ready waits for it.
func Start(s Spec) (*Process, error) {
	r, err := launch(s, os.O_TRUNC)
	if err != nil {
		return nil, err
	}
	return &Process{spec: s, cur: r}, nil
}

// launch starts one run of s, its output going to Dir/<Name>.log, truncated or appended to
// (logMode: os.O_TRUNC or os.O_APPEND).
func launch(s Spec, logMode int) (*running, error) {
	log, err := os.OpenFile(s.Dir+string(os.PathSeparator)+s.Name+".log", os.O_WRONLY|os.O_CREATE|logMode, 0o644)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", s.Name, err)
	}
	cmd := exec.Command(s.Path, s.Args...)
	cmd.Dir = s.Dir
	cmd.Env = append(os.Environ(), s.Env...)
	cmd.Stdout, cmd.Stderr = log, log
	if s.User != "" {
		if err := asUser(cmd, s.User); err != nil {
			log.Close()
			return nil, fmt.Errorf("start %s as %s: %w", s.Name, s.User, err)
		}
	}
	if err := proc.Start(cmd); err != nil {
		log.Close()
		return nil, fmt.Errorf("start %s (%s): %w", s.Name, s.Path, err)
	}
	r := &running{cmd: cmd, exited: make(chan struct{}), log: log}
	go func() { _ = cmd.Wait(); close(r.exited) }()
	return r, nil
}

// stop sends sig (nil: SIGKILL at once), waits up to grace for the process to end, then
// kills it, and closes the log.
func (r *running) stop(sig os.Signal, grace time.Duration) {
	defer r.log.Close()
	if sig != nil && r.cmd.Process.Signal(sig) == nil {
		select {
		case <-r.exited:
			return
		case <-time.After(grace):
		}
	}
	resume(r.cmd.Process) // a stopped process must be able to die
	kill(r.cmd.Process)   // with its children: PostgreSQL's backends die with a crash
	<-r.exited
}

// Run runs a setup command (initdb) to its end, as s.User when set and root; its output is
// in the error when it fails.
func Run(ctx context.Context, s Spec) error {
	cmd := exec.CommandContext(ctx, s.Path, s.Args...)
	cmd.Dir = s.Dir
	cmd.Env = append(os.Environ(), s.Env...)
	if s.User != "" {
		if err := asUser(cmd, s.User); err != nil {
			return fmt.Errorf("%s as %s: %w", s.Name, s.User, err)
		}
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %w: %s", s.Name, err, tail(string(out)))
	}
	return nil
}

func (p *Process) current() *running {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cur
}

// Pid is the server's process id.
func (p *Process) Pid() int { return p.current().cmd.Process.Pid }

// Exited is closed when the process running now has ended.
func (p *Process) Exited() <-chan struct{} { return p.current().exited }

// Ready polls probe until it succeeds, the process exits or timeout passes; the error then
// carries the tail of the server's log. Restart waits with the same probe.
func (p *Process) Ready(ctx context.Context, timeout time.Duration, probe func(context.Context) error) error {
	p.mu.Lock()
	p.probe, p.timeout = probe, timeout
	p.mu.Unlock()
	return p.ready(ctx, timeout, probe)
}

func (p *Process) ready(ctx context.Context, timeout time.Duration, probe func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	exited := p.Exited()
	var last error
	for {
		pctx, pcancel := context.WithTimeout(ctx, time.Second)
		last = probe(pctx)
		pcancel()
		if last == nil {
			return nil
		}
		select {
		case <-exited:
			return fmt.Errorf("%s exited while starting: %s", p.spec.Name, p.Output())
		case <-ctx.Done():
			return fmt.Errorf("%s not ready after %s (%v): %s", p.spec.Name, timeout, last, p.Output())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Stop sends sig (nil: SIGKILL at once) and waits up to grace for the process to end, then
// kills it; it closes the log. The server stays down: a later Restart fails. Safe to call
// twice.
func (p *Process) Stop(sig os.Signal, grace time.Duration) {
	p.life.Lock()
	defer p.life.Unlock()
	if p.stopped {
		return
	}
	p.stopped = true
	p.current().stop(sig, grace)
}

// Kill is the node fault: the server dies at once (SIGKILL), as in a crash.
func (p *Process) Kill() {
	p.life.Lock()
	defer p.life.Unlock()
	if !p.stopped {
		p.current().stop(nil, 0)
	}
}

// restartAttempts bounds how often Restart tries: a server killed a moment ago can refuse
// to start while what it left behind goes away (PostgreSQL's backends, still attached to
// its shared memory, end only once they notice their postmaster's death).
const restartAttempts = 5

// Restart kills the server if it still runs, starts it again on the same data (its
// directory is kept: etcd, ZooKeeper and PostgreSQL come back with what they had written)
// and waits until Ready's probe answers.
func (p *Process) Restart(ctx context.Context) error {
	var err error
	for attempt := range restartAttempts {
		if attempt > 0 && !clock.Sleep(ctx, time.Duration(attempt)*200*time.Millisecond) {
			return err
		}
		if err = p.relaunch(); err != nil {
			return err
		}
		p.mu.Lock()
		probe, timeout := p.probe, p.timeout
		p.mu.Unlock()
		if probe == nil {
			return nil
		}
		if err = p.ready(ctx, timeout, probe); err == nil {
			return nil
		}
	}
	return err
}

// relaunch replaces the process with a new run of the same spec, its log appended to.
func (p *Process) relaunch() error {
	p.life.Lock()
	defer p.life.Unlock()
	if p.stopped {
		return fmt.Errorf("restart %s: stopped", p.spec.Name)
	}
	p.current().stop(nil, 0)
	r, err := launch(p.spec, os.O_APPEND)
	if err != nil {
		return err
	}
	p.mu.Lock()
	p.cur = r
	p.mu.Unlock()
	return nil
}

// Output is the tail of the server's log, for error messages.
func (p *Process) Output() string {
	b, err := os.ReadFile(p.current().log.Name())
	if err != nil {
		return ""
	}
	return tail(string(b))
}

// CPU is the server's CPU time (user + system) so far, with that of its live child
// processes (PostgreSQL's backends), in µs. Linux only.
func (p *Process) CPU() (time.Duration, error) { return cpuTime(p.Pid()) }

func tail(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 1500 {
		s = "…" + s[len(s)-1500:]
	}
	return s
}

// TempDir makes a temporary directory named lockbench-<name>-*, for one server's data. It
// records this process's pid in it: a lockbench killed with SIGKILL takes its servers with
// it but cannot remove their directories, so the first TempDir of a later lockbench
// removes those whose owner is gone (see proc.TempDir; name must be among its swept names).
func TempDir(name string) (string, error) {
	dir, err := proc.TempDir(name)
	if err != nil {
		return "", fmt.Errorf("create a directory for %s: %w", name, err)
	}
	return dir, nil
}

// LookPath finds the first of paths (absolute, or names looked up in PATH) that exists.
func LookPath(what string, paths ...string) (string, error) {
	for _, p := range paths {
		if strings.ContainsRune(p, os.PathSeparator) {
			if st, err := os.Stat(p); err == nil && !st.IsDir() {
				return p, nil
			}
			continue
		}
		if full, err := exec.LookPath(p); err == nil {
			return full, nil
		}
	}
	return "", fmt.Errorf("%s is not installed (looked for %s)", what, strings.Join(paths, ", "))
}
