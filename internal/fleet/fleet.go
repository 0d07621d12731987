package fleet

// The parent's side: start the children of each segment, wait for them, merge their
// results.

import (
	"bytes"
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/lockbench/lockbench/internal/cmdline"
	"github.com/lockbench/lockbench/internal/output"
	"github.com/lockbench/lockbench/internal/proc"
	"github.com/lockbench/lockbench/internal/usage"
	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/session"
	"github.com/lockbench/lockbench/workload"
)

// procsTempName names the directory of a fleet's results, lockbench-procs-*: like the
// servers' directories, one whose owner was killed (kill -9) is removed by a later run.
const procsTempName = "procs"

func init() { proc.RegisterTempNames(procsTempName) }

// Spec is what the parent knows of its fleet before anything starts.
type Spec struct {
	Command  string    // the load command the children run: run or sweep
	Given    []Flag    // the user's flags (Given), which the children get less the parent's own
	Drop     []string  // more of Given a child does not take: the parent's command's own (capacity's --slo, ...)
	Segments []Segment // from Segments
	Phases   int       // the run's phases, as the progress reports count them
	Binary   string    // the lockbench binary to start; "" for this process's own
}

// Fleet is the parent's side of a --procs run.
type Fleet struct {
	spec     Spec
	target   []string // the flags that reach the target and the services, for every child
	replaced []string // the user's flags that target stands for
	env      []string // the children's environment
	progress func(workload.Progress)

	// interrupted: the run was cut short by a signal, to this process (or its process
	// group) or to a child alone: the merged report is a partial one.
	interrupted bool
}

// New is the fleet of spec on the servers of session s, which the parent opened for its
// children; progress receives the fleet's once-a-second reports, summed over the children.
func New(spec Spec, s *session.Session, progress func(workload.Progress)) (*Fleet, error) {
	flags, replaced, err := ChildTarget(s)
	if err != nil {
		return nil, err
	}
	env := os.Environ() // the secret flags go with it (childArgs), not on command lines
	return &Fleet{spec: spec, target: flags, replaced: replaced, env: env, progress: progress}, nil
}

// Interrupted reports whether the run was cut short by a signal: the merged report is a
// partial one.
func (fl *Fleet) Interrupted() bool { return fl.interrupted }

// Run runs every segment's fleet in turn and returns the merged results in one Summary
// (its target as the first segment's processes saw it, the merges' notes). On interruption
// it returns what the children reported so far.
func (fl *Fleet) Run(ctx context.Context) (*report.Summary, error) {
	dir, err := proc.TempDir(procsTempName) // swept by a later run if this one is killed
	if err != nil {
		return nil, fmt.Errorf("--procs: a directory for the processes' results: %w", err)
	}
	defer os.RemoveAll(dir)
	out := &report.Summary{}
	for k, seg := range fl.spec.Segments {
		merged, err := fl.runSegment(ctx, seg, filepath.Join(dir, strconv.Itoa(k)), nil)
		if merged != nil {
			if k == 0 {
				out.Target = merged.Target
			}
			out.Results = append(out.Results, merged.Results...)
			out.Notes = AppendNew(out.Notes, merged.Notes...)
		}
		if err != nil || ctx.Err() != nil || fl.interrupted {
			return out, err
		}
	}
	return out, nil
}

// Step runs phase alone across its processes, each child given the extra flags too (a
// capacity step's --rate, --duration and --warmup), and returns the merged result: the
// parent judges a capacity step on the fleet's result, not on a process's. On
// interruption it returns what the children reported so far.
func (fl *Fleet) Step(ctx context.Context, phase int, extra []string) (*report.Summary, error) {
	procs := 1
	for _, seg := range fl.spec.Segments {
		if seg.From <= phase && phase < seg.To {
			procs = seg.Procs
		}
	}
	dir, err := proc.TempDir(procsTempName)
	if err != nil {
		return nil, fmt.Errorf("--procs: a directory for the processes' results: %w", err)
	}
	defer os.RemoveAll(dir)
	return fl.runSegment(ctx, Segment{From: phase, To: phase + 1, Procs: procs}, dir, extra)
}

// AppendNew appends the items not in list yet.
func AppendNew(list []string, items ...string) []string {
	for _, s := range items {
		if !slices.Contains(list, s) {
			list = append(list, s)
		}
	}
	return list
}

// child is one running process of a fleet.
type child struct {
	node   int
	cmd    *exec.Cmd
	out    string       // its JSON result
	stderr bytes.Buffer // what it said, for its error
	done   chan struct{}
	err    error // how it ended
}

// runSegment starts seg.Procs children, waits for them, and merges their results. The first
// child that fails stops the others (they would wait for it at the barrier) and its error
// is the segment's.
func (fl *Fleet) runSegment(ctx context.Context, seg Segment, dir string, extra []string) (*report.Summary, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	exe := fl.spec.Binary
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("--procs: cannot find lockbench's own binary to start: %w", err)
		}
	}
	var nonce [4]byte
	_, _ = crand.Read(nonce[:])
	barrier := "procs-" + hex.EncodeToString(nonce[:])

	agg := newProgress(seg, fl.spec.Phases, fl.progress)
	kids := make([]*child, seg.Procs)
	ended := make(chan *child, len(kids))
	for i := range kids {
		k := &child{node: i + 1, out: filepath.Join(dir, fmt.Sprintf("proc-%d.json", i+1)), done: make(chan struct{})}
		args, secrets := fl.childArgs(seg, k.node, barrier, k.out, extra)
		k.cmd = exec.Command(exe, args...)
		k.cmd.Env = ChildEnv(fl.env, seg.Procs)
		if len(secrets) > 0 {
			b, _ := json.Marshal(secrets)
			k.cmd.Env = append(k.cmd.Env, SecretsEnv+"="+string(b))
		}
		k.cmd.Stderr = &k.stderr
		stdout, err := k.cmd.StdoutPipe()
		if err == nil {
			err = proc.Start(k.cmd) // dies with this process, SIGKILL included
		}
		if err != nil {
			stopAll(kids[:i], syscall.SIGKILL)
			for range i {
				<-ended
			}
			return nil, fmt.Errorf("--procs: start process %d: %w", k.node, err)
		}
		kids[i] = k
		go func() {
			agg.read(k.node, stdout)
			k.err = k.cmd.Wait()
			close(k.done)
			ended <- k
		}()
	}
	failed, interrupted := wait(ctx, kids, ended)
	agg.flush()
	fl.interrupted = fl.interrupted || interrupted
	if failed != nil {
		return nil, failed.error()
	}
	var ins []*report.Summary
	for _, k := range kids {
		s, err := output.ReadSummary(k.out)
		if err != nil {
			if interrupted {
				continue // stopped before it had anything to report
			}
			return nil, fmt.Errorf("--procs: process %d wrote no result: %w", k.node, err)
		}
		ins = append(ins, s)
	}
	if len(ins) == 0 {
		return nil, nil
	}
	sameStart(ins)
	return report.Merge(ins, report.MergeOptions{})
}

// sameStart gives the children's results the start of the first: they met at the barrier,
// so they ran together, but a child slow to start (a busy machine) stamps its result that
// much later than the others, and the merge's check that files ran together, which reads
// only the stamps and the phases' lengths, takes a short run (a capacity step of 300ms)
// for two runs apart.
func sameStart(ins []*report.Summary) {
	first := ins[0].StartedAt
	for _, s := range ins {
		if s.StartedAt.Before(first) {
			first = s.StartedAt
		}
	}
	for _, s := range ins {
		s.StartedAt = first
	}
}

// wait waits for every child. An interruption is passed on (each writes its partial
// result); the first child that fails stops the others, which would wait for it at the
// barrier, and is returned.
func wait(ctx context.Context, kids []*child, ended <-chan *child) (failed *child, interrupted bool) {
	stop := ctx.Done()
	for range kids {
		var k *child
		for k == nil {
			select {
			case <-stop:
				interrupted, stop = true, nil
				stopAll(kids, syscall.SIGINT)
			case k = <-ended:
			}
		}
		if !interrupted && exitStatus(k.err) == cmdline.ExitInterrupted {
			// A child was signalled itself (each runs in a process group of its own, so
			// a kill reached it alone): the fleet stops as one, each child with its
			// partial result.
			interrupted, stop = true, nil
			stopAll(kids, syscall.SIGINT)
		}
		// A child's inconclusive phase (exit 6) is judged again on the merged result.
		if failed == nil && k.err != nil && exitStatus(k.err) != cmdline.ExitInconclusive && !(interrupted && exitStatus(k.err) == cmdline.ExitInterrupted) {
			failed = k
			stopAll(kids, syscall.SIGKILL)
		}
	}
	return failed, interrupted
}

// error is a failed child's error: its exit status and the last lines it wrote on stderr.
func (k *child) error() error {
	msg := strings.TrimSpace(k.stderr.String())
	lines := strings.Split(msg, "\n")
	if len(lines) > 20 {
		lines = lines[len(lines)-20:]
	}
	for i, l := range lines {
		lines[i] = strings.TrimPrefix(l, "lockbench run: ")
	}
	msg = strings.Join(lines, "\n")
	if msg == "" {
		msg = k.err.Error()
	}
	err := fmt.Errorf("process %d of the --procs fleet failed (%v): %s", k.node, k.err, msg)
	if exitStatus(k.err) == cmdline.ExitUsage {
		return &usage.Error{Err: err}
	}
	return err
}

func exitStatus(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return -1
}

// stopAll signals every child still running.
func stopAll(kids []*child, sig syscall.Signal) {
	for _, k := range kids {
		if k == nil || k.cmd.Process == nil {
			continue
		}
		select {
		case <-k.done:
		default:
			_ = k.cmd.Process.Signal(sig)
		}
	}
}
