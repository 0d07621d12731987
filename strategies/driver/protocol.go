package driver

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// ProtocolVersion is the version of the driver protocol this package speaks (docs/drivers.md);
// a driver's hello may name it, and a driver that names another is refused.
const ProtocolVersion = 1

// The message types. A request (lockbench → driver) carries an id; its reply carries the same
// id. Events (driver → lockbench) carry none: hello first, then lost and extended at any time.
const (
	msgHello     = "hello"
	msgPing      = "ping"
	msgPong      = "pong"
	msgAcquire   = "acquire"
	msgGranted   = "granted"
	msgTimeout   = "timeout"
	msgError     = "error"
	msgRelease   = "release"
	msgReleased  = "released"
	msgNotOwner  = "not_owner"
	msgRenew     = "renew"
	msgRenewed   = "renewed"
	msgAbandon   = "abandon"
	msgAbandoned = "abandoned"
	msgLost      = "lost"
	msgExtended  = "extended"
)

// hello is the driver's first line: who it is and what it can do.
type hello struct {
	Type     string `json:"type"`
	Protocol int    `json:"protocol"`
	// Name is the lock's name ("redlock", "redis-py Lock"); Version the library and its
	// version as installed ("redlock 4.2.0 on redis 3.1.2"): the catalog's Source.
	Name    string `json:"name"`
	Version string `json:"version"`
	// Summary says in one line what the driver does with the library (optional).
	Summary  string   `json:"summary"`
	Supports supports `json:"supports"`
}

// supports says what a driver can do beyond a plain mutex.
type supports struct {
	// Reentry: the same worker may acquire a key it holds (lockbench's --reentry).
	Reentry bool `json:"reentry"`
	// Renewal: the driver answers renew requests (lockbench's --watchdog). A library that
	// extends its locks by itself does not need it: it says so with extended events.
	Renewal bool `json:"renewal"`
	// Semaphore: a key admits up to LOCKBENCH_PERMITS holders (lockbench's --permits).
	Semaphore bool `json:"semaphore"`
	// Fencing: granted carries a fence, monotonic per key.
	Fencing bool `json:"fencing"`
	// Chain: a release may carry the same worker's next acquire ("then"), which the driver
	// begins as soon as the release is done: lockbench sends it in a closed loop of one key
	// a cycle.
	Chain bool `json:"chain"`
}

// request is a line lockbench writes.
type request struct {
	Type      string `json:"type"`
	ID        uint64 `json:"id"`
	Worker    string `json:"worker,omitempty"`
	Key       string `json:"key,omitempty"`
	TTLMS     int64  `json:"ttl_ms,omitempty"`
	TimeoutMS int64  `json:"timeout_ms,omitempty"`
	Lease     string `json:"lease,omitempty"`
	// Then is an acquire that a release carries, for a driver that supports chain: the
	// driver begins it as soon as the release is done, whatever the release's outcome, and
	// answers each under its own id (the release's first).
	Then *request `json:"then,omitempty"`
}

// reply is a line the driver writes: a reply to a request (ID set) or an event.
type reply struct {
	Type    string `json:"type"`
	ID      uint64 `json:"id"`
	Lease   string `json:"lease"`
	Fence   uint64 `json:"fence"`
	ValidMS *int64 `json:"valid_ms"`
	Message string `json:"message"`
}

// appendRequest appends req as one JSON line, what json.Marshal writes for it and a
// newline, without reflection: every request pays it on the protocol's hot path.
func appendRequest(b []byte, req request) []byte {
	return append(appendObject(b, &req), '\n')
}

// appendObject appends req as a JSON object.
func appendObject(b []byte, req *request) []byte {
	b = append(b, `{"type":`...)
	b = appendString(b, req.Type)
	b = append(b, `,"id":`...)
	b = strconv.AppendUint(b, req.ID, 10)
	if req.Worker != "" {
		b = appendString(append(b, `,"worker":`...), req.Worker)
	}
	if req.Key != "" {
		b = appendString(append(b, `,"key":`...), req.Key)
	}
	if req.TTLMS != 0 {
		b = strconv.AppendInt(append(b, `,"ttl_ms":`...), req.TTLMS, 10)
	}
	if req.TimeoutMS != 0 {
		b = strconv.AppendInt(append(b, `,"timeout_ms":`...), req.TimeoutMS, 10)
	}
	if req.Lease != "" {
		b = appendString(append(b, `,"lease":`...), req.Lease)
	}
	if req.Then != nil {
		b = appendObject(append(b, `,"then":`...), req.Then)
	}
	return append(b, '}')
}

// appendString appends s as a JSON string: as it is when it is printable ASCII that needs
// no escape (keys, owners and leases are), through encoding/json otherwise.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// parseReply reads one line of the driver's stdout. A line that is not a JSON object of a
// known type, or a reply without the fields its type needs, is a protocol error.
func parseReply(line []byte) (reply, error) {
	r, ok := decodeReply(line)
	if !ok {
		r = reply{}
		if err := json.Unmarshal(line, &r); err != nil {
			return r, fmt.Errorf("wrote a line that is not JSON: %s", quote(line))
		}
	}
	switch r.Type {
	case msgGranted:
		if r.ID == 0 || r.Lease == "" {
			return r, fmt.Errorf("wrote granted without an id or a lease: %s", quote(line))
		}
	case msgPong, msgTimeout, msgError, msgReleased, msgNotOwner, msgRenewed, msgAbandoned:
		if r.ID == 0 {
			return r, fmt.Errorf("wrote %s without an id: %s", r.Type, quote(line))
		}
	case msgLost, msgExtended:
		if r.Lease == "" {
			return r, fmt.Errorf("wrote %s without a lease: %s", r.Type, quote(line))
		}
	default:
		return r, fmt.Errorf("wrote a line of unknown type %q: %s", r.Type, quote(line))
	}
	return r, nil
}

// parseHello reads the driver's first line.
func parseHello(line []byte) (hello, error) {
	var h hello
	if err := json.Unmarshal(line, &h); err != nil || h.Type != msgHello {
		return h, fmt.Errorf("began with %s, not a hello", quote(line))
	}
	if h.Protocol != 0 && h.Protocol != ProtocolVersion {
		return h, fmt.Errorf("speaks protocol %d; lockbench speaks %d", h.Protocol, ProtocolVersion)
	}
	if strings.TrimSpace(h.Name) == "" {
		return h, fmt.Errorf("said hello without a name: %s", quote(line))
	}
	return h, nil
}

// quote is a line as an error shows it: quoted, cut at 80 bytes.
func quote(line []byte) string {
	s := strings.TrimRight(string(line), "\r\n")
	if len(s) > 80 {
		s = s[:80] + "…"
	}
	return fmt.Sprintf("%q", s)
}

// Raw is the reply as JSON again, for errors.
func (r reply) Raw() []byte {
	b, _ := json.Marshal(struct {
		Type  string `json:"type"`
		ID    uint64 `json:"id,omitempty"`
		Lease string `json:"lease,omitempty"`
	}{r.Type, r.ID, r.Lease})
	return b
}

// decodeReply reads the common shape of a reply without reflection: a flat object of the
// reply's own field names, spelled as they are, with strings that need no unescaping and
// integers. Anything else (another field, an escape, a nested value, a float, a name in
// other case) is not ok, and json.Unmarshal reads the line: the result is the same.
func decodeReply(line []byte) (r reply, ok bool) {
	d := flat{b: line}
	if !d.byte('{') {
		return r, false
	}
	if d.byte('}') {
		return r, d.end()
	}
	for {
		name, ok := d.str()
		if !ok || !d.byte(':') {
			return r, false
		}
		switch name {
		case "type":
			r.Type, ok = d.str()
		case "lease":
			r.Lease, ok = d.str()
		case "message":
			r.Message, ok = d.str()
		case "id":
			r.ID, ok = d.uint()
		case "fence":
			r.Fence, ok = d.uint()
		case "valid_ms":
			if d.null() {
				r.ValidMS, ok = nil, true
				break
			}
			var v int64
			v, ok = d.int()
			r.ValidMS = &v
		default:
			return r, false
		}
		if !ok {
			return r, false
		}
		if d.byte('}') {
			return r, d.end()
		}
		if !d.byte(',') {
			return r, false
		}
	}
}

// flat is decodeReply's reader over one line.
type flat struct {
	b []byte
	i int
}

func (d *flat) space() {
	for d.i < len(d.b) && (d.b[d.i] == ' ' || d.b[d.i] == '\t' || d.b[d.i] == '\r' || d.b[d.i] == '\n') {
		d.i++
	}
}

// byte consumes c after white space.
func (d *flat) byte(c byte) bool {
	d.space()
	if d.i < len(d.b) && d.b[d.i] == c {
		d.i++
		return true
	}
	return false
}

func (d *flat) end() bool {
	d.space()
	return d.i == len(d.b)
}

func (d *flat) null() bool {
	d.space()
	if len(d.b)-d.i >= 4 && string(d.b[d.i:d.i+4]) == "null" {
		d.i += 4
		return true
	}
	return false
}

// str reads a string of printable ASCII without escapes.
func (d *flat) str() (string, bool) {
	if !d.byte('"') {
		return "", false
	}
	start := d.i
	for ; d.i < len(d.b); d.i++ {
		switch c := d.b[d.i]; {
		case c == '"':
			s := string(d.b[start:d.i])
			d.i++
			return s, true
		case c < 0x20 || c > 0x7e || c == '\\':
			return "", false
		}
	}
	return "", false
}

// digits reads an integer's digits: no leading zero, no fraction, no exponent.
func (d *flat) digits() (string, bool) {
	start := d.i
	for d.i < len(d.b) && d.b[d.i] >= '0' && d.b[d.i] <= '9' {
		d.i++
	}
	n := string(d.b[start:d.i])
	if n == "" || (len(n) > 1 && n[0] == '0') {
		return "", false
	}
	if d.i < len(d.b) && (d.b[d.i] == '.' || d.b[d.i] == 'e' || d.b[d.i] == 'E') {
		return "", false
	}
	return n, true
}

func (d *flat) uint() (uint64, bool) {
	d.space()
	n, ok := d.digits()
	if !ok {
		return 0, false
	}
	v, err := strconv.ParseUint(n, 10, 64)
	return v, err == nil
}

func (d *flat) int() (int64, bool) {
	d.space()
	neg := d.i < len(d.b) && d.b[d.i] == '-'
	if neg {
		d.i++
	}
	n, ok := d.digits()
	if !ok {
		return 0, false
	}
	if neg {
		n = "-" + n
	}
	v, err := strconv.ParseInt(n, 10, 64)
	return v, err == nil
}
