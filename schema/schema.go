// Package schema holds the JSON Schemas (draft 2020-12) of what lockbench writes and reads,
// and checks documents against them:
//
//   - result.json: a result file (--format json) of run, sweep and capacity, and of
//     `report merge`;
//   - comparison.json: `report compare --format json`;
//   - profile.json: a scenario profile (profiles/builtin/*.yaml and your own), which the
//     built-in YAML files name in a `# yaml-language-server: $schema=` line so that editors
//     complete and check them.
//
// The schemas are generated from the Go types (report.Summary, report.Comparison, the
// profiles package's field table) by ./gen and checked in; a test fails when they drift.
// After changing those types, regenerate them with
//
//	go generate ./schema
//
// Every result and comparison carries schema_version (report.SchemaVersion), which the
// schemas pin. The schemas are strict (no unknown fields), so validate a document against
// the schemas of the lockbench release that wrote it.
//
// The lockbench binary does not import this package: it is for tests and for tools.
package schema

import (
	"bytes"
	"embed"
	"fmt"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

//go:generate go run ./gen -out .

// The schema files, by name.
const (
	Result     = "result.json"
	Comparison = "comparison.json"
	Profile    = "profile.json"
)

// Names are the schema files, in the order the generator writes them.
var Names = []string{Result, Comparison, Profile}

//go:embed result.json comparison.json profile.json
var files embed.FS

// File returns the checked-in text of the schema named name (one of Names).
func File(name string) ([]byte, error) {
	return files.ReadFile(name)
}

var compiled struct {
	sync.Mutex
	byName map[string]*jsonschema.Schema
}

// compile returns the schema named name, compiled once. Formats (date-time) are asserted,
// not just annotated.
func compile(name string) (*jsonschema.Schema, error) {
	compiled.Lock()
	defer compiled.Unlock()
	if s, ok := compiled.byName[name]; ok {
		return s, nil
	}
	text, err := files.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("schema %s: %w", name, err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(text))
	if err != nil {
		return nil, fmt.Errorf("schema %s: %w", name, err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource(name, doc); err != nil {
		return nil, fmt.Errorf("schema %s: %w", name, err)
	}
	s, err := c.Compile(name)
	if err != nil {
		return nil, fmt.Errorf("schema %s: %w", name, err)
	}
	if compiled.byName == nil {
		compiled.byName = map[string]*jsonschema.Schema{}
	}
	compiled.byName[name] = s
	return s, nil
}

// Validate checks the JSON document doc against the schema named name (Result,
// Comparison). The error lists every violation with its location in doc.
func Validate(name string, doc []byte) error {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	return ValidateValue(name, v)
}

// ValidateValue checks a decoded document (maps, slices, strings, numbers, booleans, as
// encoding/json or a YAML decoder produce them) against the schema named name.
func ValidateValue(name string, v any) error {
	s, err := compile(name)
	if err != nil {
		return err
	}
	return s.Validate(v)
}
