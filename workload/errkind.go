package workload

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/strategies"
)

// A phase's failed lock-server calls, counted by kind (report.ErrorKinds) with the first
// error of each kind kept as a typed value for the hints: which ACL right is missing, whether
// the server stopped answering. Only the error path runs any of this; a successful acquire
// or release costs nothing more.

// Error kinds, indexes of errorCounts.counts.
const (
	kindDenied = iota
	kindTimeout
	kindUnreachable
	kindServer
	kindOther
	nKinds
)

var kindNames = [nKinds]string{report.ErrorDenied, report.ErrorTimeout, report.ErrorUnreachable, report.ErrorServer, report.ErrorOther}

// errorCounts is a phase's errors by kind: counts in the measured window (they add up to the
// recorder's errors), and the first error of each kind whenever it happened.
type errorCounts struct {
	counts [nKinds]atomic.Uint64

	mu     sync.Mutex
	firsts []report.PhaseError // in the order the kinds first appeared
	seen   [nKinds]atomic.Bool // the kind has its first error: later ones skip the lock
	probes uint64              // failed probes, under mu: errors the recorder did not count
}

// add counts err, of the given operation, when recorded (in the window), and keeps it when
// it is the first of its kind. channels is the ACL channel right the phase's strategy needs.
func (e *errorCounts) add(err error, op, channels string, recorded bool) {
	k, right := classify(err, channels)
	if recorded {
		e.counts[k].Add(1)
	}
	if e.seen[k].Load() {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.seen[k].Load() {
		e.seen[k].Store(true)
		e.firsts = append(e.firsts, report.PhaseError{Kind: kindNames[k], Op: op, Right: right, Message: firstLine(err.Error())})
	}
}

// probeFailed keeps the failure of lockbench's own read of the lock server at the window's
// end, and counts it as an error of its kind, when the server did not answer it (a timeout,
// or unreachable): frozen or gone, it left the workers stuck rather than measured. It
// reports whether it did.
func (e *errorCounts) probeFailed(err error) bool {
	k, _ := classify(err, "")
	if k != kindTimeout && k != kindUnreachable {
		return false
	}
	e.counts[k].Add(1)
	e.mu.Lock()
	defer e.mu.Unlock()
	e.probes++
	e.firsts = append(e.firsts, report.PhaseError{Kind: kindNames[k], Op: report.OpProbe, Message: firstLine(err.Error())})
	return true
}

// fill puts the counts and the first errors into r, and the failed probes into its errors.
func (e *errorCounts) fill(r *report.Result) {
	var k report.ErrorKinds
	any := false
	for i := range e.counts {
		if n := e.counts[i].Load(); n > 0 {
			k.Add(kindNames[i], n)
			any = true
		}
	}
	if any {
		r.ErrorsByKind = &k
	}
	e.mu.Lock()
	r.FirstErrors = append([]report.PhaseError(nil), e.firsts...)
	r.Errors += e.probes
	e.mu.Unlock()
	if len(r.FirstErrors) == 0 {
		r.FirstErrors = nil
	}
}

// classify sorts a failed lock-server call by what went wrong, and names the ACL right a
// denied one lacked (channels: the phase's channel right). It reads the error's types first
// (deadlines, network errors) and only then its text: an error reply is text (NOPERM ...,
// "permission denied" from etcd and PostgreSQL), whichever client carried it.
func classify(err error, channels string) (kind int, right string) {
	msg := err.Error()
	if k, r, ok := denied(msg, channels); ok {
		return k, r
	}
	var ne net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded),
		errors.As(err, &ne) && ne.Timeout():
		return kindTimeout, ""
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		errors.Is(err, syscall.ECONNABORTED), errors.Is(err, net.ErrClosed), errors.Is(err, io.EOF),
		errors.Is(err, io.ErrUnexpectedEOF):
		return kindUnreachable, ""
	}
	var op *net.OpError
	if errors.As(err, &op) {
		return kindUnreachable, ""
	}
	if serverReply(err) {
		return kindServer, ""
	}
	return kindOther, ""
}

// denied recognises a refusal of the server to this user, and the right it lacked.
func denied(msg, channels string) (kind int, right string, ok bool) {
	switch {
	case strings.Contains(msg, "NOPERM"):
	case strings.Contains(msg, "can't publish to the channel"): // a script's PUBLISH
		return kindDenied, channels, true
	case strings.Contains(msg, "NOSCRIPT") && strings.Contains(msg, "scripting"):
		return kindDenied, "+@scripting", true
	case strings.Contains(msg, "permission denied"): // etcd, PostgreSQL
		return kindDenied, "", true
	default:
		return 0, "", false
	}
	switch {
	case strings.Contains(msg, "channel"):
		return kindDenied, channels, true
	case strings.Contains(msg, "keys"):
		return kindDenied, "~lockbench:*", true
	}
	if _, rest, found := strings.Cut(msg, "to run the '"); found {
		cmd, _, _ := strings.Cut(rest, "'")
		switch strings.ToLower(cmd) {
		case "eval", "evalsha", "eval_ro", "evalsha_ro", "script", "fcall", "fcall_ro", "function":
			return kindDenied, "+@scripting", true
		case "":
		default:
			return kindDenied, "+" + strings.ToLower(cmd), true
		}
	}
	return kindDenied, "", true
}

// serverReply reports whether err carries an error reply of the server (rueidis's
// RedisError, go-redis's redis.Error): an error whose text begins with an upper-case code.
func serverReply(err error) bool {
	for e := err; e != nil; e = errors.Unwrap(e) {
		if _, ok := e.(interface{ RedisError() }); ok {
			return true
		}
		code, _, _ := strings.Cut(e.Error(), " ")
		if len(code) >= 3 && strings.ToUpper(code) == code && strings.Trim(code, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") == "" {
			return true
		}
	}
	return false
}

// channelRight is the ACL channel right a strategy needs: lockbench's channels (the pubsub
// wait's turns and hand-offs) and, for the Redisson family, Redisson's.
func channelRight(source string) string {
	if strings.Contains(source, "Redisson") || strings.Contains(source, "redisson") {
		return "&lockbench:* &redisson_*"
	}
	return "&lockbench:*"
}

// ownSettings are the lock settings a library or lock service may keep its own way.
var ownSettings = []string{"wait", "watchdog"}

// ownOf lists the settings of ownSettings the strategy does not take from lockbench
// (Info.Applies, nil = all): it waits, or keeps its lease alive, its own way.
func ownOf(info strategies.Info) []string {
	if info.Applies == nil {
		return nil
	}
	var own []string
	for _, s := range ownSettings {
		if !slices.Contains(info.Applies, s) {
			own = append(own, s)
		}
	}
	return own
}

// waitOf is the wait a phase's row names: the policy it ran, or report.OwnText when its
// lock waits its own way.
func waitOf(info strategies.Info, w strategies.Wait) string {
	if slices.Contains(ownOf(info), "wait") {
		return report.OwnText
	}
	return w.String()
}
