package launch

// The live status line and the signal handling of a load command.

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"golang.org/x/term"

	"github.com/lockbench/lockbench/internal/cmdline"
	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/workload"
)

// signalWindow is how close together signals count as one. GNU timeout, the usual CI
// wrapper, signals its child and then the child's process group, and a `kill -INT` of a
// job's group may come with one to its leader: a second signal within this window is the
// same request, not "Ctrl-C again".
const signalWindow = 500 * time.Millisecond

// runSignals are the signals that stop a run and still print its report: Ctrl-C, kill's
// default, and SIGHUP (a closed SSH session or terminal), taken as SIGTERM. All three exit
// 130 once the report is written.
var runSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

// signalContext is cancelled by the first SIGINT, SIGTERM or SIGHUP; another one more than
// signalWindow later quits at once (exit 130), whatever the run is waiting for — a frozen
// server included. The second is handled here rather than left to the default action: a
// process started in the background of a script has SIGINT ignored, and would ignore it
// again. A child of a --procs fleet (child) takes only the first: its parent forwards
// the interruption and kills it if it must, and a second signal must not cost the
// fleet a child's partial result.
func signalContext(progress *Line, child bool) (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, runSignals...)
	done := make(chan struct{})
	go func() {
		select {
		case <-sigs:
		case <-done:
			return
		}
		first := time.Now()
		cancel()
		progress.Say("interrupted: stopping workers, releasing held locks, stopping servers (Ctrl-C again to quit at once)")
		for {
			select {
			case <-sigs:
				if child || time.Since(first) < signalWindow {
					continue // the same interruption, delivered twice
				}
				progress.clear()
				fmt.Fprintln(progress.w, "lockbench: interrupted again: quitting at once (spawned servers die with lockbench)")
				os.Exit(cmdline.ExitInterrupted)
			case <-done:
				return
			}
		}
	}()
	var once sync.Once
	return ctx, func() {
		once.Do(func() {
			signal.Stop(sigs)
			close(done)
			cancel()
		})
	}
}

// Line is the live status on a terminal's stderr: rewritten in place once a second,
// cleared before the report. Off when stderr is not a terminal or with --quiet.
//
// It is also where the engine's once-a-second report fans out to the live exports
// (--metrics-addr, --live: see live.go), which run whether or not the line shows.
type Line struct {
	w     io.Writer
	on    bool
	quiet bool

	starting bool // a start-up line is shown and not finished

	// headerRows are the terminal rows the run's description took when the run started
	// (header); said, that a line was printed below it since (say).
	headerRows int
	said       bool

	observers []func(workload.Progress)
}

// observe adds an export of the engine's reports. Call it before the run starts.
func (p *Line) observe(fn func(workload.Progress)) { p.observers = append(p.observers, fn) }

func newLine(stderr io.Writer, quiet bool) *Line {
	f, ok := stderr.(*os.File)
	return &Line{w: stderr, quiet: quiet, on: !quiet && ok && term.IsTerminal(int(f.Fd()))}
}

func (p *Line) update(pr workload.Progress) {
	for _, fn := range p.observers {
		fn(pr)
	}
	if !p.on {
		return
	}
	head := fmt.Sprintf("[%d/%d %s]", pr.Phase, pr.Phases, strings.TrimSpace(pr.Strategy+" "+pr.Label))
	if pr.Warmup {
		fmt.Fprintf(p.w, "\r\033[K%s warm-up %s/%s", head, pr.Elapsed.Round(time.Second), pr.Total)
		return
	}
	fmt.Fprintf(p.w, "\r\033[K%s %s/%s  %s acq/s  p99 %s  overlaps %d", head,
		pr.Elapsed.Round(time.Second), pr.Total, report.FormatRate(pr.AcquireRate), report.FormatUS(float64(pr.P99US)), pr.Overlaps)
}

// engine adds the line's report of the start-ups to the engine's options.
func (p *Line) engine(o workload.Options) workload.Options {
	o.StartUp = p.startUp
	return o
}

// startUp shows a phase's start-up once it has lasted a second, also when stderr is not a
// terminal (a log, CI): there as one line, "starting 1000000 workers… done in 2.3s".
func (p *Line) startUp(s workload.StartUp) {
	if p.quiet || (!p.starting && s.Elapsed < time.Second) {
		return
	}
	head := fmt.Sprintf("[%d/%d %s]", s.Phase, s.Phases, strings.TrimSpace(s.Strategy+" "+s.Label))
	switch {
	case p.on && s.Done:
		fmt.Fprintf(p.w, "\r\033[K%s started %d workers in %s\n", head, s.Workers, s.Elapsed.Round(100*time.Millisecond))
	case p.on:
		left := "" // at the pace so far
		if s.Started > 0 {
			left = fmt.Sprintf(", about %s left", (s.Elapsed * time.Duration(s.Workers-s.Started) / time.Duration(s.Started)).Round(time.Second))
		}
		fmt.Fprintf(p.w, "\r\033[K%s starting %d workers… %d ready (%s%s)", head, s.Workers, s.Started, s.Elapsed.Round(time.Second), left)
	default:
		if !p.starting {
			fmt.Fprintf(p.w, "%s starting %d workers… ", head, s.Workers)
		}
		if s.Done {
			fmt.Fprintf(p.w, "done in %s\n", s.Elapsed.Round(100*time.Millisecond))
		}
	}
	p.starting = !s.Done
}

// Say prints a line above the progress line; like the line itself, only on a terminal.
func (p *Line) Say(msg string) {
	if p.on {
		p.said = true
		fmt.Fprintf(p.w, "\r\033[K%s\n", msg)
	}
}

// endStartUp ends a start-up line left unfinished off a terminal, the run having been
// interrupted during the start-up: what is printed next starts a line of its own. Called
// once the engine has returned.
func (p *Line) endStartUp() {
	if p.starting && !p.on {
		fmt.Fprintln(p.w, "cut short")
	}
	p.starting = false
}

func (p *Line) clear() {
	if p.on {
		fmt.Fprint(p.w, "\r\033[K")
	}
}

// header shows the run's description (the table report's run:, target:, workload:, ...
// lines) when the run starts, above the status line: a first run shows at once what it
// does rather than a blank screen until its report. Like the status line, only on a
// terminal.
func (p *Line) header(s *report.Summary) {
	if !p.on {
		return
	}
	var buf bytes.Buffer
	_ = report.WriteHeader(&buf, s)
	width := 0
	if f, ok := p.w.(*os.File); ok {
		width, _, _ = term.GetSize(int(f.Fd()))
	}
	p.headerRows = 0
	for _, line := range strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n") {
		n := utf8.RuneCountInString(line)
		if width <= 0 || n <= width {
			p.headerRows++
		} else {
			p.headerRows += (n + width - 1) / width
		}
	}
	_, _ = p.w.Write(buf.Bytes())
}

// dropHeader erases the description header printed, for a table report about to be printed
// below it on the same terminal, which begins with the same lines: the screen then reads as
// the report alone. It is left when a line was printed below it (an interruption).
func (p *Line) dropHeader() {
	if !p.on || p.headerRows == 0 || p.said {
		return
	}
	fmt.Fprintf(p.w, "\r\033[K\033[%dA\033[J", p.headerRows)
	p.headerRows = 0
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
