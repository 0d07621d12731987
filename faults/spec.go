// Package faults injects the failures the seeds and the literature name — a holder paused
// past its ttl, a crash between SETNX and EXPIRE, skewed client clocks, a paused, killed,
// slowed or partitioned Redis, a failover that loses unreplicated locks — on schedule, so
// that every strategy's failure mode becomes a measured number.
package faults

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Kind names a fault.
type Kind string

const (
	HolderPause  Kind = "holder-pause"  // a critical section stalls; renewals keep running
	ProcessPause Kind = "process-pause" // the holder and its renewals freeze together
	ReleasePause Kind = "release-pause" // a release stalls between its commands
	RedisPause   Kind = "redis-pause"   // a server stops answering
	Kill         Kind = "kill"          // a spawned server dies, optionally back empty
	Failover     Kind = "failover"      // sentinel: the master dies, its lagging replica takes over
	Latency      Kind = "latency"       // a proxy delays a node's traffic for the whole phase
	Partition    Kind = "partition"     // a proxy cuts a node off for a while
	ClockSkew    Kind = "clock-skew"    // some workers' clocks are off
	CrashBetween Kind = "crash-between" // a setnx-expire client dies between its two commands
)

// form is a fault's syntax: its required and optional fields.
type form struct {
	kind     Kind
	required []string
	optional []string
	summary  string
}

var forms = []form{
	{HolderPause, []string{"p", "d"}, nil, "a critical section stalls for d with probability p; its lease's renewals keep running"},
	{ProcessPause, []string{"p", "d"}, []string{"point"}, "the holder and its renewals freeze for d with probability p (a stop-the-world pause)\n" +
		"at point=hold (the default) after the hold; at point=write between the lease check (--on-lost abort)\n" +
		"and the last write to the resource: the window no client-side check closes"},
	{ReleasePause, []string{"p", "d"}, nil, "a release stalls for d with probability p: get-del's between its GET and DEL, the others' before their first command"},
	{RedisPause, []string{"node", "at", "d"}, nil, "node stops answering at time at, for d"},
	{Kill, []string{"node", "at"}, []string{"restart"}, "a spawned node dies (SIGKILL) at time at; back empty after restart"},
	{Failover, []string{"at"}, []string{"lag"}, "sentinel topology: the master dies at time at; its replica, lagging by lag, is promoted"},
	{Latency, []string{"node", "ms"}, []string{"jitter"}, "a proxy adds ms milliseconds (± jitter) to every reply of node"},
	{Partition, []string{"node", "at", "d"}, nil, "a proxy cuts node off at time at, for d"},
	{ClockSkew, []string{"fraction", "offset"}, nil, "that fraction of workers reads a clock shifted by offset"},
	{CrashBetween, []string{"p"}, nil, "a setnx-expire client dies between SETNX and EXPIRE with probability p"},
}

// Forms lists every fault's syntax, one per line, for help and error messages, as a user
// types it: kill:node=I,at=T[,restart=D] (the comma of an optional field is optional too).
func Forms() []string {
	out := make([]string, len(forms))
	for i, f := range forms {
		var b strings.Builder
		b.WriteString(string(f.kind) + ":")
		for j, r := range f.required {
			if j > 0 {
				b.WriteByte(',')
			}
			b.WriteString(r + "=" + placeholder(r))
		}
		for j, o := range f.optional {
			sep := ","
			if len(f.required) == 0 && j == 0 {
				sep = ""
			}
			b.WriteString("[" + sep + o + "=" + placeholder(o) + "]")
		}
		out[i] = b.String()
	}
	return out
}

// Help returns the fault catalog: each form and what it does, a summary's further lines
// aligned under its first.
func Help() string {
	var b strings.Builder
	for i, f := range Forms() {
		summary := strings.ReplaceAll(forms[i].summary, "\n", "\n"+strings.Repeat(" ", 2+44+1))
		fmt.Fprintf(&b, "  %-44s %s\n", f, summary)
	}
	return b.String()
}

func placeholder(field string) string {
	switch field {
	case "p", "fraction":
		return "P"
	case "node":
		return "I"
	case "ms":
		return "M"
	case "at":
		return "T"
	case "point":
		return strings.Join(pointNames(), "|")
	}
	return "D"
}

// Point is where in a lock cycle a process-pause freezes its holder.
type Point string

const (
	// PointHold freezes the holder after its hold (Set.Stall), the default.
	PointHold Point = "hold"
	// PointWrite freezes the holder between its lease check (--on-lost abort) and its last
	// write to the resource (Set.StallWrite): the holder saw its lease alive, then writes
	// after it lapsed — Kleppmann's case that no client-side check closes the window.
	PointWrite Point = "write"
)

var points = []Point{PointHold, PointWrite}

func pointNames() []string {
	out := make([]string, len(points))
	for i, p := range points {
		out[i] = string(p)
	}
	return out
}

// Spec is one parsed fault. Times (At) count from the start of the measured window.
type Spec struct {
	Kind     Kind
	Raw      string        // as given
	P        float64       // probability, per critical section, acquire or release
	D        time.Duration // how long a pause or partition lasts
	Node     int           // target node index (see target.Conn.Servers)
	At       time.Duration // when it fires, from the window's start
	Restart  time.Duration // kill: back (empty) after this long; 0 = stays dead for the phase
	Lag      time.Duration // failover: replication delay
	MS       time.Duration // latency: added delay
	Jitter   time.Duration // latency: ± variation
	Fraction float64       // clock-skew: share of workers affected
	Offset   time.Duration // clock-skew: clock shift (may be negative)
	Point    Point         // process-pause: where the holder freezes; PointHold unless given
}

func (s Spec) String() string { return s.Raw }

// SpecError is a fault spec lockbench cannot use: a usage error.
type SpecError struct {
	Value  string
	Reason string
}

// ExitCode is 2: the caller's input is wrong, as a command line reports it.
func (e *SpecError) ExitCode() int { return 2 }

func (e *SpecError) Error() string {
	return fmt.Sprintf("invalid --fault %q: %s; valid forms:\n  %s", e.Value, e.Reason, strings.Join(Forms(), "\n  "))
}

// Parse reads one fault spec, e.g. "holder-pause:p=0.05,d=600ms".
func Parse(raw string) (Spec, error) {
	bad := func(format string, a ...any) (Spec, error) {
		return Spec{}, &SpecError{Value: raw, Reason: fmt.Sprintf(format, a...)}
	}
	name, args, _ := strings.Cut(strings.TrimSpace(raw), ":")
	var f *form
	for i := range forms {
		if string(forms[i].kind) == name {
			f = &forms[i]
		}
	}
	if f == nil {
		return bad("unknown fault %q", name)
	}
	s := Spec{Kind: f.kind, Raw: strings.TrimSpace(raw)}
	seen := map[string]bool{}
	for _, kv := range strings.Split(args, ",") {
		if kv = strings.TrimSpace(kv); kv == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return bad("%q is not field=value", kv)
		}
		if !slices.Contains(f.required, k) && !slices.Contains(f.optional, k) {
			return bad("%s has no field %q", f.kind, k)
		}
		if seen[k] {
			return bad("field %q given twice", k)
		}
		seen[k] = true
		if err := s.set(k, v); err != nil {
			return bad("%s", err)
		}
	}
	for _, r := range f.required {
		if !seen[r] {
			return bad("%s needs %s=", f.kind, r)
		}
	}
	if s.Kind == ProcessPause && s.Point == "" {
		s.Point = PointHold
	}
	return s, nil
}

// ParseAll parses every spec.
func ParseAll(raws []string) ([]Spec, error) {
	out := make([]Spec, 0, len(raws))
	for _, r := range raws {
		s, err := Parse(r)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

func (s *Spec) set(k, v string) error {
	var err error
	switch k {
	case "p":
		s.P, err = probability(v)
	case "fraction":
		s.Fraction, err = probability(v)
	case "node":
		s.Node, err = strconv.Atoi(v)
		if err == nil && s.Node < 0 {
			err = fmt.Errorf("node must be >= 0")
		}
	case "ms":
		var ms float64
		if ms, err = strconv.ParseFloat(v, 64); err == nil && ms < 0 {
			err = fmt.Errorf("ms must be >= 0")
		}
		s.MS = time.Duration(ms * float64(time.Millisecond))
	case "offset":
		s.Offset, err = time.ParseDuration(v)
	case "point":
		s.Point = Point(v)
		if !slices.Contains(points, s.Point) {
			err = fmt.Errorf("want one of %s", strings.Join(pointNames(), ", "))
		}
	case "d", "at", "restart", "lag", "jitter":
		var d time.Duration
		if d, err = time.ParseDuration(v); err == nil && d < 0 {
			err = fmt.Errorf("%s must be >= 0", k)
		}
		switch k {
		case "d":
			s.D = d
		case "at":
			s.At = d
		case "restart":
			s.Restart = d
		case "lag":
			s.Lag = d
		case "jitter":
			s.Jitter = d
		}
	}
	if err != nil {
		return fmt.Errorf("field %s=%q: %v", k, v, err)
	}
	return nil
}

func probability(v string) (float64, error) {
	p, err := strconv.ParseFloat(v, 64)
	if err != nil || p < 0 || p > 1 {
		return 0, fmt.Errorf("want a number from 0 to 1")
	}
	return p, nil
}

// NeedsNodes reports whether the fault acts on a server (as opposed to the client side).
func (s Spec) NeedsNodes() bool {
	switch s.Kind {
	case RedisPause, Kill, Failover, Latency, Partition:
		return true
	}
	return false
}

// NeedsProxy reports whether the fault works through a TCP proxy in front of a node, which
// must be in place before the clients connect.
func (s Spec) NeedsProxy() bool { return s.Kind == Latency || s.Kind == Partition }
