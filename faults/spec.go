// Package faults injects the failures the seeds and the literature name — a holder paused
// past its ttl, a crash between SETNX and EXPIRE, skewed client clocks, a paused, killed,
// slowed or partitioned Redis, a failover that loses unreplicated locks — on schedule, so
// that every strategy's failure mode becomes a measured number.
//
// Each fault kind is one file (holder_pause.go, kill.go, ...) that registers its syntax,
// what it needs of the target and what it does (see kind in registry.go).
package faults

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/lockbench/lockbench/internal/usage"
)

// Kind names a fault. The kinds are declared, each with what it does, in their own files.
type Kind string

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

// NeedsNodes reports whether the fault acts on a server (as opposed to the client side).
func (s Spec) NeedsNodes() bool {
	k := lookup(s.Kind)
	return k != nil && k.play != nil
}

// NeedsProxy reports whether the fault works through a TCP proxy in front of a node, which
// must be in place before the clients connect.
func (s Spec) NeedsProxy() bool {
	k := lookup(s.Kind)
	return k != nil && k.proxy
}

// field is one name=value of a fault's syntax.
type field struct {
	name        string
	placeholder string // what Forms shows for the value: P, I, T, D, M or the choices
	def         string // the value of an optional field not given; "" leaves Spec's zero value
	// parse stores v in s; its error says what is wrong with v.
	parse func(s *Spec, v string) error
}

// The fields several kinds share. A field of one kind only is declared in its kind's file.
var (
	fieldP    = probabilityField("p", func(s *Spec) *float64 { return &s.P })
	fieldD    = lastingField("d", func(s *Spec) *time.Duration { return &s.D })
	fieldAt   = durationField("at", "T", func(s *Spec) *time.Duration { return &s.At })
	fieldNode = field{name: "node", placeholder: "I", parse: func(s *Spec, v string) error {
		n, err := strconv.Atoi(v)
		if err == nil && n < 0 {
			err = fmt.Errorf("node must be >= 0")
		}
		s.Node = n
		return err
	}}
)

// probabilityField is a number from 0 to 1, shown as P.
func probabilityField(name string, to func(*Spec) *float64) field {
	return field{name: name, placeholder: "P", parse: func(s *Spec, v string) error {
		p, err := strconv.ParseFloat(v, 64)
		if err != nil || !(p >= 0 && p <= 1) { // !(…) refuses NaN too
			return fmt.Errorf("want a number from 0 to 1")
		}
		*to(s) = p
		return nil
	}}
}

// durationField is a duration >= 0, such as 500ms.
func durationField(name, placeholder string, to func(*Spec) *time.Duration) field {
	return field{name: name, placeholder: placeholder, parse: func(s *Spec, v string) error {
		d, err := time.ParseDuration(v)
		if err == nil && d < 0 {
			err = fmt.Errorf("%s must be >= 0", name)
		}
		*to(s) = d
		return err
	}}
}

// lastingField is how long a fault lasts: a duration > 0 (0 would be no fault at all).
func lastingField(name string, to func(*Spec) *time.Duration) field {
	return field{name: name, placeholder: "D", parse: func(s *Spec, v string) error {
		d, err := time.ParseDuration(v)
		if err == nil && d <= 0 {
			err = fmt.Errorf("%s must be > 0 (how long the fault lasts; 0 is no fault)", name)
		}
		*to(s) = d
		return err
	}}
}

// Kinds lists every fault's kind, in the order Forms lists their syntax.
func Kinds() []string {
	var out []string
	for _, k := range kinds() {
		out = append(out, string(k.name))
	}
	return out
}

// Forms lists every fault's syntax, one per line, for help and error messages, as a user
// types it: kill:node=I,at=T[,restart=D] (the comma of an optional field is optional too).
func Forms() []string {
	var out []string
	for _, k := range kinds() {
		var b strings.Builder
		b.WriteString(string(k.name) + ":")
		for j, r := range k.required {
			if j > 0 {
				b.WriteByte(',')
			}
			b.WriteString(r.name + "=" + r.placeholder)
		}
		for j, o := range k.optional {
			sep := ","
			if len(k.required) == 0 && j == 0 {
				sep = ""
			}
			b.WriteString("[" + sep + o.name + "=" + o.placeholder + "]")
		}
		out = append(out, b.String())
	}
	return out
}

// Help returns the fault catalog: each form and what it does, a summary's further lines
// aligned under its first.
func Help() string {
	var b strings.Builder
	for i, f := range Forms() {
		summary := strings.ReplaceAll(kinds()[i].summary, "\n", "\n"+strings.Repeat(" ", 2+44+1))
		fmt.Fprintf(&b, "  %-44s %s\n", f, summary)
	}
	return b.String()
}

// SpecError is a fault spec lockbench cannot use: a usage error.
type SpecError struct {
	Value  string
	Reason string
}

// ExitCode is usage.ExitCode: the caller's input is wrong, as a command line reports it.
func (e *SpecError) ExitCode() int { return usage.ExitCode }

func (e *SpecError) Error() string {
	return fmt.Sprintf("invalid --fault %q: %s; valid forms:\n  %s", e.Value, e.Reason, strings.Join(Forms(), "\n  "))
}

// Parse reads one fault spec, e.g. "holder-pause:p=0.05,d=600ms".
func Parse(raw string) (Spec, error) {
	bad := func(format string, a ...any) (Spec, error) {
		return Spec{}, &SpecError{Value: raw, Reason: fmt.Sprintf(format, a...)}
	}
	name, args, _ := strings.Cut(strings.TrimSpace(raw), ":")
	k := lookup(Kind(name))
	if k == nil {
		return bad("unknown fault %q", name)
	}
	s := Spec{Kind: k.name, Raw: strings.TrimSpace(raw)}
	seen := map[string]bool{}
	for _, kv := range strings.Split(args, ",") {
		if kv = strings.TrimSpace(kv); kv == "" {
			if strings.TrimSpace(args) == "" {
				continue // no fields at all: the required ones are named below
			}
			return bad("an empty field (two commas in a row, or one at an end); want field=value,field=value")
		}
		name, v, ok := strings.Cut(kv, "=")
		if !ok {
			return bad("%q is not field=value", kv)
		}
		f, ok := k.field(name)
		if !ok {
			return bad("%s has no field %q", k.name, name)
		}
		if seen[name] {
			return bad("field %q given twice", name)
		}
		seen[name] = true
		if err := f.parse(&s, v); err != nil {
			return bad("field %s=%q: %v", name, v, err)
		}
	}
	for _, f := range k.required {
		if !seen[f.name] {
			return bad("%s needs %s=", k.name, f.name)
		}
	}
	for _, f := range k.optional {
		if !seen[f.name] && f.def != "" {
			_ = f.parse(&s, f.def) // register made sure that it parses
		}
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
