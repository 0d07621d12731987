package profiles

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// Parse reads a profile from src; name is what its errors call it (a built-in's name or a
// path). It walks the YAML nodes itself rather than decoding into a struct, so that every
// value keeps its line and every error names the field and the line. Every error is an
// *Error.
func Parse(name string, src []byte) (*Profile, error) {
	p := &Profile{Name: name, Source: src, Doc: docComment(src)}
	root, err := p.root(src)
	if err != nil {
		return nil, err
	}
	if err := p.top(root); err != nil {
		return nil, err
	}
	return p, nil
}

// root returns the mapping at the top of src's only YAML document.
func (p *Profile) root(src []byte) (*yaml.Node, error) {
	if off := invalidUTF8(src); off >= 0 {
		return nil, p.errorf(lineAt(src, off), "", "not a text file (invalid UTF-8); a profile is YAML text")
	}
	dec := yaml.NewDecoder(bytes.NewReader(src))
	var doc yaml.Node
	if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
		return nil, p.noSettings()
	} else if err != nil {
		return nil, p.syntaxError(err)
	}
	var next yaml.Node
	if err := dec.Decode(&next); err == nil {
		return nil, p.errorf(next.Line, "", "a second YAML document starts here; a profile is one document")
	} else if !errors.Is(err, io.EOF) {
		return nil, p.syntaxError(err)
	}
	if len(doc.Content) == 0 {
		return nil, p.noSettings()
	}
	root := deref(doc.Content[0])
	if root.Kind != yaml.MappingNode {
		return nil, p.errorf(root.Line, "", "not a profile: want settings such as \"workers: 100\", one per line; found %s", shown(root))
	}
	if len(root.Content) == 0 {
		return nil, p.noSettings()
	}
	return root, nil
}

// top reads the top-level settings.
func (p *Profile) top(root *yaml.Node) error {
	seen := map[string]int{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := deref(root.Content[i]), deref(root.Content[i+1])
		f, err := p.key(k, topFields, seen, "")
		if err != nil {
			return err
		}
		switch f.kind {
		case kindFaults:
			p.Faults, err = p.faults(f.name, v)
		case kindPhases:
			p.Phases, err = p.phases(v)
		default:
			var val Value
			val, err = p.value(f, f.name, k.Line, v)
			p.Values = append(p.Values, val)
		}
		if err != nil {
			return err
		}
	}
	if line, ok := seen["strategy"]; ok && seen["phases"] > 0 {
		return p.errorf(line, "strategy", "cannot be set together with phases: each phase names its own strategy")
	}
	return nil
}

// phases reads the list of explicit phases.
func (p *Profile) phases(n *yaml.Node) ([]Phase, error) {
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		return nil, p.errorf(n.Line, "phases", "must be a list of one or more phases, e.g. - {strategy: token, watchdog: auto}; found %s", shown(n))
	}
	out := make([]Phase, 0, len(n.Content))
	labels := map[string]int{} // strategy and label -> the line of its first phase
	for i, item := range n.Content {
		path := fmt.Sprintf("phases[%d]", i)
		ph, err := p.phase(path, deref(item))
		if err != nil {
			return nil, err
		}
		if ph.Label != "" {
			// Reports, compare and merge tell a strategy's phases apart by their labels.
			key := ph.Strategy + "\x00" + ph.Label
			if first, dup := labels[key]; dup {
				return nil, p.errorf(ph.labelLine, path+".label", "%q is the label of the %s phase at line %d too: give each phase of a strategy its own", ph.Label, ph.Strategy, first)
			}
			labels[key] = ph.Line
		}
		out = append(out, ph)
	}
	return out, nil
}

// phase reads one entry of phases; path names it in errors ("phases[0]").
func (p *Profile) phase(path string, n *yaml.Node) (Phase, error) {
	ph := Phase{Line: n.Line}
	if n.Kind != yaml.MappingNode {
		return ph, p.errorf(n.Line, path, "a phase is a mapping such as {strategy: token, watchdog: auto}; found %s", shown(n))
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := deref(n.Content[i]), deref(n.Content[i+1])
		f, err := p.key(k, phaseFields, seen, path)
		if err != nil {
			return ph, err
		}
		at := path + "." + f.name
		switch f.name {
		case "strategy":
			ph.Strategy, err = p.text(f, at, v)
		case "label":
			ph.Label, err = p.text(f, at, v)
			ph.labelLine = k.Line
		case "faults":
			ph.Faults, err = p.faults(at, v)
		default:
			var val Value
			val, err = p.value(f, at, k.Line, v)
			ph.Values = append(ph.Values, val)
		}
		if err != nil {
			return ph, err
		}
	}
	if ph.Strategy == "" {
		return ph, p.errorf(n.Line, path, "a phase needs a strategy, e.g. - strategy: token")
	}
	return ph, nil
}

// key checks one mapping key against fields: known, and not set twice in this mapping.
// scope is where the mapping is ("" at the top level, "phases[0]" in a phase).
func (p *Profile) key(k *yaml.Node, fields []field, seen map[string]int, scope string) (field, error) {
	if k.Kind != yaml.ScalarNode || k.Value == "" {
		return field{}, p.errorf(k.Line, scope, "a field name is a plain word such as workers; found %s", shown(k))
	}
	f, ok := lookupField(fields, k.Value)
	if !ok {
		return field{}, p.errorf(k.Line, scope, "%s", p.unknownField(k.Value, fields, scope))
	}
	if first, dup := seen[k.Value]; dup {
		return field{}, p.errorf(k.Line, scope, "duplicate field %q (first set at line %d)", k.Value, first)
	}
	seen[k.Value] = k.Line
	return f, nil
}

// unknownField explains an unknown key, and which level it belongs to when it is valid at
// the top level but written in a phase.
func (p *Profile) unknownField(name string, fields []field, scope string) string {
	if _, top := lookupField(topFields, name); top && scope != "" {
		return fmt.Sprintf("field %q cannot differ by phase: set it at the top level; valid in a phase: %s",
			name, strings.Join(names(fields), ", "))
	}
	return unknownKey(name, names(fields))
}

// faults reads a list of fault specs. Their syntax belongs to the faults package: each is
// carried as written, with its line.
func (p *Profile) faults(path string, n *yaml.Node) ([]Value, error) {
	if n.Kind != yaml.SequenceNode {
		return nil, p.errorf(n.Line, path, "must be a list of fault specs, e.g. [\"holder-pause:p=0.05,d=600ms\"]; found %s", shown(n))
	}
	out := make([]Value, 0, len(n.Content))
	for i, item := range n.Content {
		item = deref(item)
		spec, err := p.scalar(fmt.Sprintf("%s[%d]", path, i), item, "a fault spec such as \"holder-pause:p=0.05,d=600ms\"")
		if err != nil {
			return nil, err
		}
		out = append(out, Value{Key: "fault", Value: spec, Line: item.Line})
	}
	return out, nil
}

// value reads one setting written at line; path names it in errors.
func (p *Profile) value(f field, path string, line int, n *yaml.Node) (Value, error) {
	text, err := p.text(f, path, n)
	return Value{Key: f.name, Value: text, Line: line}, err
}

// text checks n against f's kind and returns it in flag syntax.
func (p *Profile) text(f field, path string, n *yaml.Node) (string, error) {
	switch f.kind {
	case kindInt:
		return p.intText(f, path, n)
	case kindNumber:
		return p.numberText(f, path, n)
	case kindDuration:
		return p.durationText(f, path, n)
	case kindStrategies:
		return p.strategiesText(path, n)
	case kindStrategy:
		return p.strategyText(path, n)
	}
	return p.scalar(path, n, "a value such as "+f.example)
}

// scalar returns n's text, trimmed; want describes an acceptable value for the message.
func (p *Profile) scalar(path string, n *yaml.Node, want string) (string, error) {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" || strings.TrimSpace(n.Value) == "" {
		return "", p.errorf(n.Line, path, "needs %s; found %s", want, shown(n))
	}
	return strings.TrimSpace(n.Value), nil
}

// intText accepts a whole number written as one (not quoted).
func (p *Profile) intText(f field, path string, n *yaml.Node) (string, error) {
	var i int
	if n.Kind != yaml.ScalarNode || n.Tag != "!!int" || n.Decode(&i) != nil {
		return "", p.errorf(n.Line, path, "needs a whole number, e.g. %s: %s; found %s", f.name, f.example, shown(n))
	}
	return strconv.Itoa(i), nil
}

// numberText accepts a finite number written as one (not quoted).
func (p *Profile) numberText(f field, path string, n *yaml.Node) (string, error) {
	var x float64
	if n.Kind != yaml.ScalarNode || (n.Tag != "!!int" && n.Tag != "!!float") || n.Decode(&x) != nil ||
		math.IsInf(x, 0) || math.IsNaN(x) {
		return "", p.errorf(n.Line, path, "needs a number, e.g. %s: %s; found %s", f.name, f.example, shown(n))
	}
	return strconv.FormatFloat(x, 'f', -1, 64), nil
}

// durationText accepts a Go duration with its unit, kept as written. A bare number other
// than 0 is refused: "5" could mean seconds or milliseconds, and the flags refuse it too.
func (p *Profile) durationText(f field, path string, n *yaml.Node) (string, error) {
	s, err := p.scalar(path, n, "a duration such as "+f.example)
	if err != nil {
		return "", err
	}
	if _, err := time.ParseDuration(s); err == nil {
		return s, nil
	}
	if _, err := strconv.ParseFloat(s, 64); err == nil {
		return "", p.errorf(n.Line, path, "%s is not a duration: a number needs a unit, e.g. \"%ss\" or \"%sms\"", s, s, s)
	}
	return "", p.errorf(n.Line, path, "%s is not a duration; write a number with a unit (ns, us, ms, s, m, h), e.g. %q or \"1m30s\"",
		quote(s), f.example)
}

// strategiesText accepts one name, a comma-separated list ("a,b", "all") or a YAML list of
// names, and returns the names joined with ",".
func (p *Profile) strategiesText(path string, n *yaml.Node) (string, error) {
	const want = "strategy names, e.g. token,fenced or [token, fenced] or all"
	var names []string
	switch n.Kind {
	case yaml.ScalarNode:
		s, err := p.scalar(path, n, want)
		if err != nil {
			return "", err
		}
		names = SplitList(s)
	case yaml.SequenceNode:
		for i, item := range n.Content {
			name, err := p.strategyText(fmt.Sprintf("%s[%d]", path, i), deref(item))
			if err != nil {
				return "", err
			}
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return "", p.errorf(n.Line, path, "needs %s; found %s", want, shown(n))
	}
	return strings.Join(names, ","), nil
}

// strategyText accepts exactly one strategy name.
func (p *Profile) strategyText(path string, n *yaml.Node) (string, error) {
	s, err := p.scalar(path, n, "one strategy name, e.g. token")
	if err != nil {
		return "", err
	}
	if strings.Contains(s, ",") || s == "all" {
		return "", p.errorf(n.Line, path, "names one strategy, found %q; write one entry per strategy", s)
	}
	return s, nil
}

// SplitList splits a comma list as the flags and profiles write them: "a, b,,c" is
// [a b c].
func SplitList(s string) []string {
	var out []string
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}

// errorf returns an *Error at line about field (either may be empty).
func (p *Profile) errorf(line int, field, format string, a ...any) *Error {
	return &Error{Profile: p.Name, Line: line, Field: field, Msg: fmt.Sprintf(format, a...)}
}

func (p *Profile) noSettings() *Error {
	return p.errorf(0, "", "has no settings; a profile holds lines such as \"workers: 100\"")
}

// syntaxError turns a YAML parser error into an *Error, moving its "line N" into Line.
func (p *Profile) syntaxError(err error) *Error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 0
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if num, tail, ok := strings.Cut(rest, ": "); ok {
			if n, convErr := strconv.Atoi(num); convErr == nil {
				line, msg = n, tail
			}
		}
	}
	return &Error{Profile: p.Name, Line: line, Msg: "not valid YAML: " + msg, Err: err}
}

// deref follows an alias to the node it names.
func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n.Kind == yaml.AliasNode && n.Alias != nil && i < 8; i++ {
		n = n.Alias
	}
	return n
}

// shown describes what was written, for "found ..." in messages.
func shown(n *yaml.Node) string {
	switch {
	case n.Kind == yaml.SequenceNode && len(n.Content) == 0:
		return "an empty list"
	case n.Kind == yaml.SequenceNode:
		return "a list"
	case n.Kind == yaml.MappingNode:
		return "a mapping"
	case n.Kind != yaml.ScalarNode:
		return "something else"
	case n.Tag == "!!null":
		return "no value"
	case n.Tag == "!!str" && strings.TrimSpace(n.Value) == "":
		return "an empty string"
	case n.Tag == "!!str":
		return "the string " + quote(n.Value)
	}
	return n.Value
}

// invalidUTF8 returns the offset of the first byte of src that is not UTF-8, or -1.
func invalidUTF8(src []byte) int {
	for off := 0; off < len(src); {
		r, size := utf8.DecodeRune(src[off:])
		if r == utf8.RuneError && size == 1 {
			return off
		}
		off += size
	}
	return -1
}

// lineAt returns the 1-based line holding byte off of src.
func lineAt(src []byte, off int) int { return 1 + bytes.Count(src[:off], []byte("\n")) }
