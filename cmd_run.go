package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/strategies"
	"github.com/lockbench/lockbench/target"
	"github.com/lockbench/lockbench/workload"
)

// runFlags are the flags of `lockbench run`, bound to one pflag set.
type runFlags struct {
	cfg      workload.Config
	strategy string
	ttl      time.Duration
	watchdog string
	wait     string

	redis          string
	connectTimeout time.Duration

	format, out, hdrDir string
	quiet               bool
}

func (f *runFlags) bind(fs *pflag.FlagSet) {
	fs.StringVarP(&f.strategy, "strategy", "s", "token", "strategies to run, one phase each: a,b,c or all ("+strings.Join(strategies.Names(), ", ")+")")
	fs.IntVarP(&f.cfg.Workers, "workers", "w", 100, "goroutines contending for the locks (closed loop)")
	fs.Float64VarP(&f.cfg.Rate, "rate", "r", 0, "open loop: start this many acquisitions per second regardless of completions (0 = closed loop)")
	fs.IntVar(&f.cfg.MaxInflight, "max-inflight", 0, "open loop: acquisitions in flight at most; an arrival beyond it is dropped (default --workers)")
	fs.IntVarP(&f.cfg.Keys, "keys", "k", 1, "distinct lock keys (1 = one hot key)")
	fs.Var(&f.cfg.KeyDist, "key-dist", "which key each acquisition takes: uniform or zipf[:S] (S > 1, default 1.1)")
	fs.Var(&f.cfg.Hold, "hold", "time inside the critical section: a duration (1ms), uniform:MIN..MAX or exp:MEAN")
	fs.IntVar(&f.cfg.Reentry, "reentry", 0, "nested re-acquires by the holder (reentrant strategies only)")
	fs.DurationVarP(&f.cfg.Duration, "duration", "d", 10*time.Second, "measured time per strategy")
	fs.DurationVar(&f.cfg.Warmup, "warmup", time.Second, "unrecorded time before each measurement (0 = none)")
	fs.DurationVar(&f.cfg.AcquireTimeout, "acquire-timeout", 5*time.Second, "give up one acquire after this long (counted as a timeout)")
	fs.DurationVar(&f.ttl, "ttl", 10*time.Second, "lease time Redis keeps a lock")
	fs.StringVar(&f.watchdog, "watchdog", "off", "lease renewal: off, auto (= ttl/3, Redisson's default) or an interval below the ttl")
	fs.StringVar(&f.wait, "wait", "backoff:1ms..50ms", "how a blocked acquirer waits: spin[:INTERVAL], backoff[:MIN..MAX] or pubsub")
	fs.StringVar(&f.redis, "redis", "127.0.0.1:6379", "Redis address(es), host:port[,host:port...]; several standalone servers are redlock's masters")
	fs.DurationVar(&f.connectTimeout, "connect-timeout", target.DefaultConnectTimeout, "give up reaching Redis after this long")
	fs.StringVarP(&f.format, "format", "f", report.DefaultFormat, "report format: "+strings.Join(report.Formats(), ", "))
	fs.StringVarP(&f.out, "out", "o", "", "write the report to this file instead of stdout")
	fs.StringVar(&f.hdrDir, "hdr-dir", "", "also write <strategy>.hgrm (percentile distribution) and <strategy>.hlog (interval log) here")
	fs.BoolVarP(&f.quiet, "quiet", "q", false, "no live progress line on stderr")
}

// config resolves the flags into a workload configuration.
func (f *runFlags) config() (workload.Config, error) {
	cfg := f.cfg
	if f.strategy == "all" {
		cfg.Strategies = strategies.Names()
	} else {
		for _, s := range strings.Split(f.strategy, ",") {
			if s = strings.TrimSpace(s); s != "" {
				cfg.Strategies = append(cfg.Strategies, s)
			}
		}
	}
	if f.ttl <= 0 {
		return cfg, usageErrorf("invalid --ttl %s: must be > 0", f.ttl)
	}
	cfg.TTL = f.ttl
	if cfg.Warmup == 0 {
		cfg.Warmup = -1 // the flag's 0 means none; Config's 0 means the default
	}
	var err error
	if cfg.Watchdog, err = strategies.ParseWatchdog(f.watchdog); err != nil {
		return cfg, err
	}
	if cfg.Wait, err = strategies.ParseWait(f.wait); err != nil {
		return cfg, err
	}
	return cfg, cfg.Validate()
}

const runSynopsis = `Drives each strategy, one phase at a time, with many workers contending for the same keys,
and reports acquires per second, acquire and handoff latency percentiles, Redis commands and
CPU per acquire, fairness, and what an independent oracle saw of mutual exclusion.

Examples:
  lockbench run --redis 127.0.0.1:6379 --strategy token,fenced --workers 1000 --duration 5s
  lockbench run --strategy all --keys 1000 --key-dist zipf:1.2 --hold exp:2ms --format json
  lockbench run --strategy token --rate 5000 --wait pubsub --hdr-dir ./hdr`

func runCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("run [flags]", runSynopsis, stdout)
	var f runFlags
	f.bind(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	cfg, err := f.config()
	if err != nil {
		return err
	}
	write, err := report.Lookup(f.format)
	if err != nil {
		return err
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	conn, err := target.ConnectExternal(ctx, splitList(f.redis), f.connectTimeout)
	if err != nil {
		return err
	}
	defer conn.Close()

	summary := &report.Summary{
		Tool: "lockbench", Version: versionString(), StartedAt: time.Now().UTC(),
		Target: report.Target{Mode: conn.Mode, Topology: conn.Topology, Addrs: conn.Addrs, RedisVersion: conn.RedisVersion},
		Config: cfg.Report(),
	}
	progress := newProgressLine(stderr, f.quiet)
	go func() {
		<-ctx.Done()
		stop() // a second Ctrl-C kills at once
		progress.say("interrupted: stopping workers and releasing held locks (Ctrl-C again to quit at once)")
	}()
	results, runErr := workload.Run(ctx, cfg, workload.Target{Client: conn.Client, Nodes: conn.Nodes}, workload.Options{Progress: progress.update})
	progress.clear()
	summary.Results = results
	summary.Interrupted = runErr != nil && ctx.Err() != nil
	if runErr != nil && !summary.Interrupted {
		return runErr
	}
	if err := writeReport(summary, write, f.out, stdout); err != nil {
		return err
	}
	if f.hdrDir != "" {
		if _, err := report.WriteHDRFiles(f.hdrDir, summary); err != nil {
			return err
		}
	}
	if summary.Interrupted {
		return &exitError{code: exitInterrupted, msg: "interrupted; the report covers what ran"}
	}
	return nil
}

// writeReport writes the summary to out, or to stdout when out is empty.
func writeReport(s *report.Summary, write report.Reporter, out string, stdout io.Writer) error {
	if out == "" {
		return write(stdout, s)
	}
	f, err := os.Create(out)
	if err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	if err := write(f, s); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// progressLine is the live status on a terminal's stderr: rewritten in place once a second,
// cleared before the report. Off when stderr is not a terminal or with --quiet.
type progressLine struct {
	w  io.Writer
	on bool
}

func newProgressLine(stderr io.Writer, quiet bool) *progressLine {
	f, ok := stderr.(*os.File)
	return &progressLine{w: stderr, on: !quiet && ok && term.IsTerminal(int(f.Fd()))}
}

func (p *progressLine) update(pr workload.Progress) {
	if !p.on {
		return
	}
	head := fmt.Sprintf("[%d/%d %s]", pr.Phase, pr.Phases, pr.Strategy)
	if pr.Warmup {
		fmt.Fprintf(p.w, "\r\033[K%s warm-up %s/%s", head, pr.Elapsed.Round(time.Second), pr.Total)
		return
	}
	fmt.Fprintf(p.w, "\r\033[K%s %s/%s  %s acq/s  p99 %s  overlaps %d", head,
		pr.Elapsed.Round(time.Second), pr.Total, report.FormatRate(pr.AcquireRate), report.FormatUS(float64(pr.P99US)), pr.Overlaps)
}

func (p *progressLine) say(msg string) {
	if p.on {
		fmt.Fprintf(p.w, "\r\033[K%s\n", msg)
	}
}

func (p *progressLine) clear() {
	if p.on {
		fmt.Fprint(p.w, "\r\033[K")
	}
}
