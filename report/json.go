package report

import (
	"encoding/json"
	"fmt"
	"io"
)

// JSON writes s as indented JSON (two spaces, trailing newline) in the schema that
// schema/result.json describes (docs/output.md); schema_version is always SchemaVersion,
// whatever s says (s may have been read from an older file), and an empty kind is written
// as run. started_at is RFC 3339 (with
// fractional seconds when the time has them). Lists the engine left nil are written as []
// rather than null, so that consumers can iterate them without a null check.
func JSON(w io.Writer, s *Summary) error {
	c := withEmptyLists(s)
	c.SchemaVersion = SchemaVersion
	c.Kind = summaryKind(s)
	return writeJSON(w, c, "json report")
}

// writeJSON writes v as indented JSON with a trailing newline; what names the report in errors.
func writeJSON(w io.Writer, v any, what string) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	b = append(b, '\n')
	if _, err := w.Write(b); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// withEmptyLists returns a shallow copy of s whose contract lists (target.addrs,
// config.strategies, results, results[].timeline) and the lists inside the optional
// sections that are present (sweep.values, capacity[].steps) are non-nil. s itself is not
// modified.
func withEmptyLists(s *Summary) *Summary {
	c := *s
	c.Target.Addrs = nonNil(c.Target.Addrs)
	c.Config.Strategies = nonNil(c.Config.Strategies)
	c.Results = make([]Result, len(s.Results))
	for i, r := range s.Results {
		r.Timeline = nonNil(r.Timeline)
		c.Results[i] = r
	}
	if s.Sweep != nil {
		sw := *s.Sweep
		sw.Values = nonNil(sw.Values)
		c.Sweep = &sw
	}
	if s.Capacity != nil {
		c.Capacity = make([]Capacity, len(s.Capacity))
		for i, cp := range s.Capacity {
			cp.Steps = nonNil(cp.Steps)
			c.Capacity[i] = cp
		}
	}
	return &c
}

// nonNil returns v, or an empty slice when v is nil.
func nonNil[T any](v []T) []T {
	if v == nil {
		return []T{}
	}
	return v
}
