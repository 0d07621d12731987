package driver

import (
	"encoding/json"
	"fmt"
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

// parseReply reads one line of the driver's stdout. A line that is not a JSON object of a
// known type, or a reply without the fields its type needs, is a protocol error.
func parseReply(line []byte) (reply, error) {
	var r reply
	if err := json.Unmarshal(line, &r); err != nil {
		return r, fmt.Errorf("wrote a line that is not JSON: %s", quote(line))
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
