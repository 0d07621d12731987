package driver

import (
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
	out   *lines   // the read end of its stdout; read by the reader of the moment (see wait)
	tail  *tail    // the end of its stderr, for the error that ends it
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

	// rd is the reader's role, held by whoever reads out (buffered 1: full when nobody
	// reads). See wait.
	rd chan struct{}
	// idle wakes the background reader after a spell with the role free (see idleRead);
	// idleReading is set while it reads.
	idle        *time.Timer
	idleReading atomic.Bool

	fmu      sync.Mutex
	frozen   int       // process-pauses under way (see freeze)
	frozeAt  time.Time // when the current freeze began
	frozenNS atomic.Int64
}

// call is a request waiting for its reply.
type call struct {
	id       uint64
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
	stdoutR, stdoutW, err := os.Pipe()
	if err != nil {
		stdinW.Close()
		return nil, fail("cannot be started: " + err.Error())
	}
	defer stdoutW.Close()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin = stdinR
	cmd.Stdout = stdoutW
	p := &process{
		name: name, cmd: cmd, in: stdinW, out: newLines(stdoutR), tail: &tail{}, grace: Grace,
		pending: make(map[uint64]*call), broken: make(chan struct{}), exited: make(chan struct{}),
		rd: make(chan struct{}, 1),
	}
	cmd.Stderr = p.tail
	cmd.WaitDelay = time.Second // a grandchild holding stderr open must not hold Wait
	if err := proc.Start(cmd); err != nil {
		stdinW.Close()
		stdoutR.Close()
		return nil, fail("cannot be started: " + err.Error())
	}
	go func() {
		_ = cmd.Wait()
		close(p.exited)
		stdoutR.Close() // as exec's StdoutPipe: a grandchild holding it must not keep a reader
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

// run starts the background reader and the hang check; events get the driver's events.
func (p *process) run(events func(reply)) {
	p.events = events
	p.idle = time.NewTimer(idleAfter)
	p.rd <- struct{}{}
	go p.idleRead()
	go p.watch()
}

// readLine reads one line of the driver's stdout; EOF or an error is the driver's end.
func (p *process) readLine() ([]byte, error) {
	line, err := p.out.next()
	switch {
	case err == nil:
		return line, nil
	case errors.Is(err, errLongLine):
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

// The reader. One goroutine at a time reads the driver's stdout and hands each reply to the
// call of its id: whoever holds rd. A call waiting for its reply takes the role when it is
// free and reads until its own reply comes (leader/follower): with few calls in flight, a
// reply then wakes the goroutine that waits for it straight from the poller, with no
// hand-off from a reading goroutine to the waiting one (a goroutine switch, and often the
// wake-up of an idle P and its thread: most of the protocol's cost on a busy machine, once
// the pipes are paid). When it has its reply it gives the role back, to another waiting
// call if there is one. While nobody waits for a reply (holds without requests, between
// phases), the driver's events (lost, extended) and its end still need a reader: the
// background reader, idleRead, takes the role once it has been free for idleAfter, and a
// call that wants it back interrupts its read (a read deadline in the past).

// idleAfter is how long the role must be free before the background reader takes it: the
// longest an event waits to be read while no request is in flight.
const idleAfter = time.Millisecond

// maxLead bounds one read of a call that leads, so that it notices its context's end and a
// broken driver (fail also interrupts the read).
const maxLead = 50 * time.Millisecond

// idleRead is the background reader: it reads while the role has been free for idleAfter,
// until a call interrupts it, and ends when the driver breaks.
func (p *process) idleRead() {
	for {
		select {
		case <-p.broken:
			return
		case <-p.idle.C:
		}
		select {
		case <-p.rd:
		default:
			continue // a call reads: it re-arms the timer when it gives the role back
		}
		_ = p.out.f.SetReadDeadline(time.Time{})
		p.idleReading.Store(true) // after the deadline's reset: a call's interruption is not undone
		for {
			line, err := p.out.next()
			if errors.Is(err, os.ErrDeadlineExceeded) {
				break // a call wants the role
			}
			if err == nil {
				_, err = p.dispatch(line, nil)
			} else if !errors.Is(err, errLongLine) {
				err = p.death()
			} else {
				err = &Error{Driver: p.name, What: fmt.Sprintf("wrote a line longer than %d bytes: %s", maxLine, quote(line))}
			}
			if err != nil {
				p.fail(err)
				break
			}
		}
		p.idleReading.Store(false)
		p.release()
	}
}

// release gives the reader's role back, and has the background reader take it if nobody
// else does within idleAfter.
func (p *process) release() {
	p.idle.Reset(idleAfter)
	p.rd <- struct{}{}
}

// lead reads as the reader until c's reply comes, done is closed or the driver breaks;
// the caller holds rd and gives it back.
func (p *process) lead(c *call, done <-chan struct{}) (reply, bool, error) {
	for {
		select {
		case r := <-c.ch:
			// The reader before handed it over as the role came free: wait's select took
			// the role rather than the reply.
			return r, true, nil
		case <-done:
			return reply{}, false, nil
		case <-p.broken:
			return reply{}, false, p.failure()
		default:
		}
		_ = p.out.f.SetReadDeadline(time.Now().Add(maxLead))
		line, err := p.out.next()
		switch {
		case errors.Is(err, os.ErrDeadlineExceeded):
			continue
		case errors.Is(err, errLongLine):
			err = &Error{Driver: p.name, What: fmt.Sprintf("wrote a line longer than %d bytes: %s", maxLine, quote(line))}
		case err != nil:
			err = p.death()
		}
		if err == nil {
			var mine bool
			var r reply
			if r, err = p.dispatch(line, c); err == nil && r.Type != "" {
				mine = true
			}
			if mine {
				return r, true, nil
			}
		}
		if err != nil {
			p.fail(err)
			return reply{}, false, p.failure()
		}
	}
}

// dispatch hands one line to its call or to events. A reply to mine is returned instead
// (Type "" otherwise). A line that breaks the protocol is an error.
func (p *process) dispatch(line []byte, mine *call) (reply, error) {
	r, err := parseReply(line)
	if err != nil {
		return reply{}, &Error{Driver: p.name, What: err.Error()}
	}
	if r.ID == 0 {
		p.events(r)
		return reply{}, nil
	}
	p.mu.Lock()
	c, ok := p.pending[r.ID]
	delete(p.pending, r.ID)
	gone := ok && c.gone
	p.mu.Unlock()
	switch {
	case !ok:
		return reply{}, &Error{Driver: p.name, What: fmt.Sprintf("replied to id %d, which no request is waiting for: %s", r.ID, quote(line))}
	case gone:
		// Nobody waits for it any more: a late grant is given back at once.
		if r.Type == msgGranted {
			go p.send(request{Type: msgRelease, Lease: r.Lease}, 0)
		}
	case c == mine:
		return r, nil
	default:
		c.ch <- r
	}
	return reply{}, nil
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
	c, _, err := p.sendThen(req, 0, nil, timeout)
	return c, err
}

// sendThen writes req with a new id, and then (when not nil) inside it with an id of its
// own, in one line, and returns their calls: req's reply is due within reqTimeout + Grace,
// then's within timeout + Grace.
func (p *process) sendThen(req request, reqTimeout time.Duration, then *request, timeout time.Duration) (*call, *call, error) {
	now := time.Now()
	frozen := p.frozenNS.Load()
	c := &call{kind: req.Type, ch: make(chan reply, 1), due: now.Add(reqTimeout + p.grace), frozenNS: frozen}
	var tc *call
	if then != nil {
		tc = &call{kind: then.Type, ch: make(chan reply, 1), due: now.Add(timeout + p.grace), frozenNS: frozen}
	}
	p.mu.Lock()
	if p.err != nil {
		p.mu.Unlock()
		return nil, nil, p.err
	}
	p.nextID++
	req.ID, c.id = p.nextID, p.nextID
	p.pending[c.id] = c
	if tc != nil {
		p.nextID++
		then.ID, tc.id = p.nextID, p.nextID
		p.pending[tc.id] = tc
		req.Then = then
	}
	p.mu.Unlock()
	if err := p.write(req); err != nil {
		p.fail(err)
		return nil, nil, p.failure()
	}
	return c, tc, nil
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
// case the call is marked gone and a late grant will be given back. It reads the reply
// itself when the reader's role is free or the background reader gives it back (see
// idleRead); otherwise the reader of the moment hands the reply over.
func (p *process) wait(c *call, done <-chan struct{}) (reply, bool, error) {
	if p.idleReading.Load() {
		_ = p.out.f.SetReadDeadline(time.Unix(1, 0)) // the background reader gives the role back
	}
	select {
	case r := <-c.ch:
		return r, true, nil
	case <-p.broken:
		return reply{}, false, p.failure()
	case <-done:
	case <-p.rd:
		r, ok, err := p.lead(c, done)
		p.release()
		if ok || err != nil {
			return r, ok, err
		}
	}
	return p.giveUp(c)
}

// giveUp stops waiting for c's reply. While c is pending it is marked gone, and its reply
// will be dropped (a grant given back) when it comes; once the reader has taken it off
// pending its reply is on its way to c.ch, and returned.
func (p *process) giveUp(c *call) (reply, bool, error) {
	p.mu.Lock()
	_, waiting := p.pending[c.id]
	c.gone = waiting
	p.mu.Unlock()
	if waiting {
		return reply{}, false, nil
	}
	select {
	case r := <-c.ch:
		return r, true, nil
	case <-p.broken:
		return reply{}, false, p.failure()
	}
}

// cancel gives c up unwaited: a grant that came, or comes later, is given back.
func (p *process) cancel(c *call) {
	if r, ok, _ := p.giveUp(c); ok && r.Type == msgGranted {
		go p.send(request{Type: msgRelease, Lease: r.Lease}, 0)
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
	_ = p.out.f.SetReadDeadline(time.Unix(1, 0)) // wake whoever reads
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

// errLongLine is a line longer than maxLine.
var errLongLine = errors.New("line too long")

// lines reads lines of a driver's stdout. Unlike a bufio.Reader it keeps a partial line
// across a read that ends by its deadline, which interrupts a reader (see idleRead). One
// goroutine at a time (the holder of process.rd).
type lines struct {
	f    *os.File
	buf  []byte
	r, w int
}

func newLines(f *os.File) *lines { return &lines{f: f, buf: make([]byte, maxLine)} }

// next returns the next line, newline included, valid until the next call; with
// errLongLine, the start of the line.
func (l *lines) next() ([]byte, error) {
	for {
		if i := bytes.IndexByte(l.buf[l.r:l.w], '\n'); i >= 0 {
			line := l.buf[l.r : l.r+i+1]
			l.r += i + 1
			return line, nil
		}
		if l.r > 0 {
			l.w = copy(l.buf, l.buf[l.r:l.w])
			l.r = 0
		}
		if l.w == len(l.buf) {
			return l.buf, errLongLine
		}
		n, err := l.f.Read(l.buf[l.w:])
		l.w += n
		if err != nil && n == 0 {
			return nil, err
		}
	}
}
