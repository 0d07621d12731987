package driver

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lockbench/lockbench/internal/proc"
)

// Grace is how long past a request's own timeout a driver may take to answer before it
// counts as hung (time it spent frozen by a process-pause does not count), and how long a
// write to its stdin may block. A driver that hangs ends its strategy with an Error.
var Grace = 10 * time.Second

// helloTimeout bounds the wait for a driver's hello: an interpreter's start on a busy
// machine.
var helloTimeout = 30 * time.Second

// maxLine is the longest line a driver may write.
const maxLine = 64 << 10

// Error is what a broken driver makes every call of its strategy return: it died, hung,
// wrote garbage or could not be started. It reads as one line naming the driver.
type Error struct {
	Driver string // the command, as the strategy's name gives it
	What   string // what went wrong, one line
}

func (e *Error) Error() string { return fmt.Sprintf("driver %q %s", e.Driver, e.What) }

// Fatal marks the error strategies.Fatal: a broken driver fails every later call the same
// way, so the engine ends the phase on the first.
func (e *Error) Fatal() bool { return true }

// process is one running driver: its pipes, the requests waiting for their replies, and the
// first error that broke it. Many goroutines call it at once; one goroutine reads its
// stdout and hands each reply to the call of its id.
type process struct {
	name  string
	cmd   *exec.Cmd
	in    *os.File // the write end of the driver's stdin
	out   *bufio.Reader
	tail  *tail // the end of its stderr, for the error that ends it
	hello hello
	grace time.Duration // Grace when it started

	wmu   sync.Mutex
	wbuf  []byte
	wdead time.Time // the write deadline set last

	mu      sync.Mutex
	pending map[uint64]*call
	nextID  uint64
	closing bool
	err     error
	broken  chan struct{} // closed when err is set
	exited  chan struct{} // closed when the driver's process has been reaped

	// events receives the driver's lost and extended events; set before the reader starts.
	events func(reply)

	fmu      sync.Mutex
	frozen   int       // process-pauses under way (see freeze)
	frozeAt  time.Time // when the current freeze began
	frozenNS atomic.Int64
}

// call is a request waiting for its reply.
type call struct {
	kind     string
	ch       chan reply // buffered: the reader never blocks on it
	due      time.Time  // the reply is expected by then, time frozen not counted
	frozenNS int64      // p.frozenNS when the request was sent
	gone     bool       // the caller stopped waiting (its context ended)
}

// start runs argv with env added to lockbench's environment, in a process group of its own
// that dies with lockbench (proc.Start: the parent-death signal on Linux), and reads its
// hello. The caller must close it.
func start(name string, argv, env []string) (*process, error) {
	fail := func(what string) error { return &Error{Driver: name, What: what} }
	if len(argv) == 0 {
		return nil, fail("is empty")
	}
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		return nil, fail("cannot be started: " + err.Error())
	}
	defer stdinR.Close()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin = stdinR
	out, err := cmd.StdoutPipe()
	if err != nil {
		stdinW.Close()
		return nil, fail("cannot be started: " + err.Error())
	}
	p := &process{
		name: name, cmd: cmd, in: stdinW, out: bufio.NewReaderSize(out, maxLine), tail: &tail{}, grace: Grace,
		pending: make(map[uint64]*call), broken: make(chan struct{}), exited: make(chan struct{}),
	}
	cmd.Stderr = p.tail
	cmd.WaitDelay = time.Second // a grandchild holding stderr open must not hold Wait
	if err := proc.Start(cmd); err != nil {
		stdinW.Close()
		return nil, fail("cannot be started: " + err.Error())
	}
	go func() {
		_ = cmd.Wait()
		close(p.exited)
	}()
	helloTimeout := helloTimeout
	helloc := make(chan error, 1)
	go func() {
		line, err := p.readLine()
		if err == nil {
			p.hello, err = parseHello(line)
			if err != nil {
				err = fail(err.Error())
			}
		}
		helloc <- err
	}()
	select {
	case err = <-helloc:
	case <-time.After(helloTimeout):
		err = fail(fmt.Sprintf("said no hello within %s", helloTimeout))
	}
	if err != nil {
		p.kill()
		return nil, err
	}
	return p, nil
}

// run starts the reader and the hang check; events get the driver's events.
func (p *process) run(events func(reply)) {
	p.events = events
	go p.read()
	go p.watch()
}

// readLine reads one line of the driver's stdout; EOF or an error is the driver's end.
func (p *process) readLine() ([]byte, error) {
	line, err := p.out.ReadSlice('\n')
	switch {
	case err == nil:
		return line, nil
	case errors.Is(err, bufio.ErrBufferFull):
		return nil, &Error{Driver: p.name, What: fmt.Sprintf("wrote a line longer than %d bytes: %s", maxLine, quote(line))}
	}
	return nil, p.death()
}

// death is the error of a driver whose stdout ended: how it exited, with the last line it
// wrote to stderr.
func (p *process) death() error {
	select {
	case <-p.exited:
	case <-time.After(p.grace):
		return &Error{Driver: p.name, What: "closed its stdout" + p.tail.last()}
	}
	return &Error{Driver: p.name, What: "exited (" + exitStatus(p.cmd.ProcessState) + ")" + p.tail.last()}
}

func exitStatus(s *os.ProcessState) string {
	if s == nil {
		return "unknown status"
	}
	return s.String()
}

// read hands each reply to its call and each event to events, until the driver's stdout
// ends or a line breaks the protocol.
func (p *process) read() {
	for {
		line, err := p.readLine()
		if err != nil {
			p.fail(err)
			return
		}
		r, err := parseReply(line)
		if err != nil {
			p.fail(&Error{Driver: p.name, What: err.Error()})
			return
		}
		if r.ID == 0 {
			p.events(r)
			continue
		}
		p.mu.Lock()
		c, ok := p.pending[r.ID]
		delete(p.pending, r.ID)
		p.mu.Unlock()
		if !ok {
			p.fail(&Error{Driver: p.name, What: fmt.Sprintf("replied to id %d, which no request is waiting for: %s", r.ID, quote(line))})
			return
		}
		if c.gone {
			// Nobody waits for it any more: a late grant is given back at once.
			if r.Type == msgGranted {
				go p.send(request{Type: msgRelease, Lease: r.Lease}, 0)
			}
			continue
		}
		c.ch <- r
	}
}

// watch fails the driver when a request stays unanswered past its due time, time spent
// frozen not counted.
func (p *process) watch() {
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-p.broken:
			return
		case <-t.C:
		}
		p.fmu.Lock()
		frozen := p.frozen > 0
		p.fmu.Unlock()
		if frozen {
			continue
		}
		now := time.Now()
		total := p.frozenNS.Load()
		var late *call
		var lateID uint64
		p.mu.Lock()
		for id, c := range p.pending {
			if now.Add(-time.Duration(total - c.frozenNS)).After(c.due) {
				late, lateID = c, id
				break
			}
		}
		p.mu.Unlock()
		if late != nil {
			p.fail(&Error{Driver: p.name, What: fmt.Sprintf("hung: no reply to %s (id %d) within its timeout + %s", late.kind, lateID, p.grace)})
			return
		}
	}
}

// send writes req with a new id and returns its call, whose reply is due within timeout +
// Grace.
func (p *process) send(req request, timeout time.Duration) (*call, error) {
	c := &call{kind: req.Type, ch: make(chan reply, 1), due: time.Now().Add(timeout + p.grace), frozenNS: p.frozenNS.Load()}
	p.mu.Lock()
	if p.err != nil {
		p.mu.Unlock()
		return nil, p.err
	}
	p.nextID++
	req.ID = p.nextID
	p.pending[req.ID] = c
	p.mu.Unlock()
	if err := p.write(req); err != nil {
		p.fail(err)
		return nil, p.failure()
	}
	return c, nil
}

// write puts one request line on the driver's stdin. A driver that stops reading blocks it
// for Grace at most (at least Grace/2).
func (p *process) write(req request) error {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	p.wbuf = appendRequest(p.wbuf[:0], req)
	// The deadline moves only once half of it has passed: a write blocks Grace/2 to Grace
	// at most, and most writes do not reset a timer.
	if now := time.Now(); p.wdead.Sub(now) < p.grace/2 {
		p.wdead = now.Add(p.grace)
		_ = p.in.SetWriteDeadline(p.wdead)
	}
	if _, err := p.in.Write(p.wbuf); err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return &Error{Driver: p.name, What: fmt.Sprintf("hung: did not read its stdin for %s", p.grace)}
		}
		return p.death()
	}
	return nil
}

// wait waits for c's reply until done is closed; ok false when done came first, in which
// case the call is marked gone and a late grant will be given back.
func (p *process) wait(c *call, done <-chan struct{}) (reply, bool, error) {
	select {
	case r := <-c.ch:
		return r, true, nil
	case <-p.broken:
		return reply{}, false, p.failure()
	case <-done:
	}
	p.mu.Lock()
	c.gone = true
	p.mu.Unlock()
	select {
	case r := <-c.ch: // the reply won the race
		return r, true, nil
	default:
		return reply{}, false, nil
	}
}

// failure is the error that broke the driver; nil while it works.
func (p *process) failure() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// fail breaks the driver with err (the first error wins), kills it and wakes every call.
// While closing, the end of the driver is no error.
func (p *process) fail(err error) {
	p.mu.Lock()
	if p.err != nil {
		p.mu.Unlock()
		return
	}
	if p.closing {
		err = &Error{Driver: p.name, What: "is closed"}
	}
	p.err = err
	close(p.broken)
	p.mu.Unlock()
	p.kill()
}

// close ends the driver: its stdin closes, which should end it; whatever is left of its
// process group a second later is killed.
func (p *process) close() {
	p.mu.Lock()
	p.closing = true
	p.mu.Unlock()
	p.in.Close()
	select {
	case <-p.exited:
	case <-time.After(time.Second):
	}
	p.fail(&Error{Driver: p.name, What: "is closed"})
	<-p.exited
}

// freeze stops the driver's process group (SIGSTOP) until every freeze under way has been
// thawed: a stop-the-world pause of the client, with the library's own timers and
// renewals. It returns the thaw.
func (p *process) freeze() (thaw func()) {
	p.fmu.Lock()
	if p.frozen == 0 {
		p.frozeAt = time.Now()
		p.stop()
	}
	p.frozen++
	p.fmu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			p.fmu.Lock()
			p.frozen--
			if p.frozen == 0 {
				p.cont()
				p.frozenNS.Add(int64(time.Since(p.frozeAt)))
			}
			p.fmu.Unlock()
		})
	}
}

// tail keeps the last bytes a driver wrote to stderr.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

const tailBytes = 4 << 10

func (t *tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if len(t.buf) > tailBytes {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-tailBytes:]...)
	}
	return len(b), nil
}

// last is the last non-empty line of stderr as an error's end, "" when none.
func (t *tail) last() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := bytes.Split(bytes.TrimSpace(t.buf), []byte("\n"))
	s := strings.TrimSpace(string(lines[len(lines)-1]))
	if s == "" {
		return ""
	}
	if len(s) > 160 {
		s = s[:160] + "…"
	}
	return "; its stderr ends: " + s
}

var _ io.Writer = (*tail)(nil)
