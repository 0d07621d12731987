// Package resultschema checks a lockbench JSON result against the contract DESIGN.md "JSON
// result" specifies. Tests use it on real outputs; the product does not need it, so it is
// not part of package report.
package resultschema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Check checks that data is a JSON result as DESIGN.md "JSON result" specifies:
// every contract field present with its JSON type, tool "lockbench", started_at in RFC 3339,
// and the same for every results[] entry and its timeline[] points. Fields beyond the contract
// are allowed; the optional fields lockbench itself writes (kind, sweep, capacity, verdict,
// safety.stuck_keys, events, ...) are not required, but when present they must have their
// type, and the entries of their lists their own required fields. The error lists every
// problem found, each with its JSON path.
func Check(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return fmt.Errorf("json schema: %w", err)
	}
	root, ok := doc.(map[string]any)
	if !ok {
		return errors.New("json schema: the document is not an object")
	}
	var c schemaCheck
	c.fields("", root, summarySchema())
	c.optional("", root, optionalSummarySchema())
	c.list("", root, "capacity", capacitySchema(), func(path string, obj map[string]any) {
		c.list(path, obj, "steps", capacityStepSchema(), nil)
	})
	c.value("tool", root["tool"], func(v any) error {
		if v != "lockbench" {
			return fmt.Errorf("is %v, want \"lockbench\"", v)
		}
		return nil
	})
	c.value("started_at", root["started_at"], func(v any) error {
		s, _ := v.(string)
		_, err := time.Parse(time.RFC3339, s)
		return err
	})
	results, _ := root["results"].([]any)
	for i, r := range results {
		c.result(fmt.Sprintf("results[%d]", i), r)
	}
	if len(c.problems) > 0 {
		return fmt.Errorf("json schema: %w", errors.Join(c.problems...))
	}
	return nil
}

// jsonKind is the JSON type a contract field must have.
type jsonKind int

const (
	jsonString jsonKind = iota
	jsonNumber
	jsonInteger // a number without a fractional part
	jsonBool
	jsonObject
	jsonArray
)

var jsonKindNames = [...]string{"string", "number", "integer", "boolean", "object", "array"}

func (k jsonKind) String() string { return jsonKindNames[k] }

// schemaField is one contract field: its dotted path inside an object and its JSON type.
type schemaField struct {
	path string
	kind jsonKind
}

// summarySchema lists the contract fields of the top-level object.
func summarySchema() []schemaField {
	return []schemaField{
		{"tool", jsonString},
		{"version", jsonString},
		{"started_at", jsonString},
		{"target", jsonObject},
		{"target.mode", jsonString},
		{"target.topology", jsonString},
		{"target.addrs", jsonArray},
		{"target.redis_version", jsonString},
		{"config", jsonObject},
		{"results", jsonArray},
	}
}

// resultSchema lists the contract fields of one results[] entry.
func resultSchema() []schemaField {
	fields := []schemaField{
		{"strategy", jsonString},
		{"wait", jsonString},
		{"ttl_ms", jsonInteger},
		{"watchdog_ms", jsonInteger},
		{"duration_s", jsonNumber},
		{"workers", jsonInteger},
		{"keys", jsonInteger},
		{"acquired", jsonInteger},
		{"acquire_rate", jsonNumber},
		{"timeouts", jsonInteger},
		{"errors", jsonInteger},
		{"dropped", jsonInteger},
		{"latency_us", jsonObject},
	}
	for _, hist := range []string{"acquire", "release", "handoff", "hold"} {
		prefix := "latency_us." + hist
		fields = append(fields, schemaField{prefix, jsonObject})
		for _, stat := range []string{"p50", "p90", "p99", "p999", "max"} {
			fields = append(fields, schemaField{prefix + "." + stat, jsonInteger})
		}
		fields = append(fields, schemaField{prefix + ".mean", jsonNumber})
	}
	return append(fields,
		schemaField{"safety.overlaps", jsonInteger},
		schemaField{"safety.stale_fences", jsonInteger},
		schemaField{"safety.lost_leases", jsonInteger},
		schemaField{"redis.commands_per_acquire", jsonNumber},
		schemaField{"redis.cpu_us_per_acquire", jsonNumber},
		schemaField{"redis.bytes_per_acquire", jsonNumber},
		schemaField{"fairness.jain", jsonNumber},
		schemaField{"renewals", jsonInteger},
		schemaField{"timeline", jsonArray},
	)
}

// secondSchema lists the contract fields of one timeline[] point.
func secondSchema() []schemaField {
	return []schemaField{
		{"t_s", jsonNumber},
		{"acquired", jsonInteger},
		{"p99_us", jsonInteger},
		{"overlaps", jsonInteger},
	}
}

// optionalSummarySchema lists top-level fields that may be missing but, when present, have
// this type.
func optionalSummarySchema() []schemaField {
	return []schemaField{
		{"kind", jsonString},
		{"interrupted", jsonBool},
		{"notes", jsonArray},
		{"node", jsonString},
		{"merged", jsonInteger},
		{"sweep", jsonObject},
		{"sweep.param", jsonString},
		{"sweep.values", jsonArray},
		{"recommendations", jsonArray},
		{"capacity", jsonArray},
	}
}

// optionalResultSchema lists fields of a results[] entry that may be missing but, when
// present, have this type.
func optionalResultSchema() []schemaField {
	return []schemaField{
		{"label", jsonString},
		{"param_value", jsonString},
		{"offered_rate", jsonNumber},
		{"verdict", jsonString},
		{"safety.stuck_keys", jsonInteger},
		{"safety.unsafe_reentries", jsonInteger},
		{"safety.stale_writes", jsonInteger},
		{"safety.fence_regressions", jsonInteger},
		{"safety.fence_reuses", jsonInteger},
		{"safety.misdeletes", jsonInteger},
		{"safety.aborted", jsonInteger},
		{"safety.fencing", jsonBool},
		{"safety.cross_process", jsonObject},
		{"safety.cross_process.processes", jsonInteger},
		{"safety.cross_process.sections", jsonInteger},
		{"safety.cross_process.clock_uncertainty_us", jsonInteger},
		{"safety.cross_process.complete", jsonBool},
		{"safety.cross_process.overlaps", jsonInteger},
		{"safety.cross_process.misdeletes", jsonInteger},
		{"history", jsonObject},
		{"history.process", jsonString},
		{"history.clock_uncertainty_us", jsonInteger},
		{"history.sections", jsonInteger},
		{"history.data", jsonString},
		{"faults", jsonArray},
		{"events", jsonArray},
		{"redis.measured", jsonBool},
		{"fairness.workers", jsonInteger},
		{"fairness.sum", jsonNumber},
		{"fairness.sum_squares", jsonNumber},
		{"histograms", jsonObject},
		{"histograms.acquire", jsonString},
		{"histograms.release", jsonString},
		{"histograms.handoff", jsonString},
		{"histograms.hold", jsonString},
		{"error", jsonString},
		{"interrupted", jsonBool},
		{"notes", jsonArray},
	}
}

// optionalSecondSchema lists fields of a timeline[] point that may be missing.
func optionalSecondSchema() []schemaField {
	return []schemaField{
		{"timeouts", jsonInteger},
		{"errors", jsonInteger},
		{"events", jsonArray},
	}
}

// eventSchema lists the fields every events[] entry has.
func eventSchema() []schemaField {
	return []schemaField{
		{"t_s", jsonNumber},
		{"fault", jsonString},
		{"what", jsonString},
	}
}

// capacitySchema lists the fields every capacity[] entry has.
func capacitySchema() []schemaField {
	return []schemaField{
		{"strategy", jsonString},
		{"slo", jsonString},
		{"steps", jsonArray},
		{"max_rate", jsonNumber},
	}
}

// capacityStepSchema lists the fields every capacity[].steps[] entry has.
func capacityStepSchema() []schemaField {
	return []schemaField{
		{"offered", jsonNumber},
		{"achieved", jsonNumber},
		{"p99_us", jsonInteger},
		{"timeout_rate", jsonNumber},
		{"pass", jsonBool},
	}
}

// schemaCheck collects the problems of one document.
type schemaCheck struct {
	problems []error
}

// fail records a problem at path.
func (c *schemaCheck) fail(path, format string, args ...any) {
	c.problems = append(c.problems, fmt.Errorf("%s: "+format, append([]any{path}, args...)...))
}

// result checks one results[] entry at path, and its timeline.
func (c *schemaCheck) result(path string, v any) {
	obj, ok := v.(map[string]any)
	if !ok {
		c.fail(path, "is %s, want object", kindOf(v))
		return
	}
	c.fields(path, obj, resultSchema())
	c.optional(path, obj, optionalResultSchema())
	c.list(path, obj, "events", eventSchema(), nil)
	timeline, _ := obj["timeline"].([]any)
	for i, p := range timeline {
		second := fmt.Sprintf("%s.timeline[%d]", path, i)
		if pobj, ok := p.(map[string]any); ok {
			c.fields(second, pobj, secondSchema())
			c.optional(second, pobj, optionalSecondSchema())
		} else {
			c.fail(second, "is %s, want object", kindOf(p))
		}
	}
}

// optional checks that every field of schema present in obj (found at path) has its kind.
func (c *schemaCheck) optional(path string, obj map[string]any, schema []schemaField) {
	for _, f := range schema {
		if v, found := lookup(obj, f.path); found && !hasKind(v, f.kind) {
			c.fail(joinPath(path, f.path), "is %s, want %s", kindOf(v), f.kind)
		}
	}
}

// list checks each entry of the array obj[key] (found at path), when it is an array: an
// object with every field of schema, then whatever each(entryPath, entry) checks. A missing
// or mistyped array is left to optional or fields.
func (c *schemaCheck) list(path string, obj map[string]any, key string, schema []schemaField, each func(string, map[string]any)) {
	entries, _ := obj[key].([]any)
	for i, e := range entries {
		entryPath := fmt.Sprintf("%s[%d]", joinPath(path, key), i)
		eobj, ok := e.(map[string]any)
		if !ok {
			c.fail(entryPath, "is %s, want object", kindOf(e))
			continue
		}
		c.fields(entryPath, eobj, schema)
		if each != nil {
			each(entryPath, eobj)
		}
	}
}

// fields checks that every field of schema exists in obj (found at path) with its kind.
func (c *schemaCheck) fields(path string, obj map[string]any, schema []schemaField) {
	for _, f := range schema {
		full := joinPath(path, f.path)
		v, found := lookup(obj, f.path)
		switch {
		case !found:
			c.fail(full, "missing")
		case !hasKind(v, f.kind):
			c.fail(full, "is %s, want %s", kindOf(v), f.kind)
		}
	}
}

// value runs check on v when v is present; fields already reported a missing one.
func (c *schemaCheck) value(path string, v any, check func(any) error) {
	if v == nil {
		return
	}
	if err := check(v); err != nil {
		c.fail(path, "%v", err)
	}
}

// lookup finds a dotted path ("latency_us.acquire.p50") in obj.
func lookup(obj map[string]any, path string) (any, bool) {
	var v any = obj
	for _, key := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = m[key]; !ok {
			return nil, false
		}
	}
	return v, true
}

// hasKind reports whether v, decoded with UseNumber, is of kind k.
func hasKind(v any, k jsonKind) bool {
	switch k {
	case jsonInteger:
		n, ok := v.(json.Number)
		return ok && isInteger(n)
	case jsonNumber:
		_, ok := v.(json.Number)
		return ok
	default:
		return kindOf(v) == k.String()
	}
}

// isInteger reports whether n has no fractional part (1e3 counts, 1.5 does not).
func isInteger(n json.Number) bool {
	if _, err := strconv.ParseInt(n.String(), 10, 64); err == nil {
		return true
	}
	if _, err := strconv.ParseUint(n.String(), 10, 64); err == nil {
		return true
	}
	f, err := n.Float64()
	return err == nil && f == math.Trunc(f)
}

// kindOf names the JSON type of v, decoded with UseNumber.
func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return jsonString.String()
	case json.Number:
		return jsonNumber.String()
	case bool:
		return jsonBool.String()
	case map[string]any:
		return jsonObject.String()
	case []any:
		return jsonArray.String()
	}
	return fmt.Sprintf("%T", v)
}

// joinPath joins a parent path and a child path with a dot.
func joinPath(parent, child string) string {
	if parent == "" {
		return child
	}
	return parent + "." + child
}
