// Command gen writes lockbench's JSON Schemas (package schema) from the Go types they
// describe: result.json from report.Summary, comparison.json from report.Comparison (both
// with invopop/jsonschema, descriptions taken from the types' Go comments) and profile.json
// from the profiles package's field table. Run it through go generate:
//
//	go generate ./schema
//
// which runs `go run ./gen -out .` in schema/. -root is the module's root (default "..",
// from schema/): the Go comments are read from its report/ directory.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/invopop/jsonschema"
	orderedmap "github.com/pb33f/ordered-map/v2"

	"github.com/lockbench/lockbench/faults"
	_ "github.com/lockbench/lockbench/internal/builtin" // every strategy the binary registers
	"github.com/lockbench/lockbench/profiles"
	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/strategies"
)

// module is the Go module path, the base of the types' names in Go comments.
const module = "github.com/lockbench/lockbench"

// baseURL is where the schemas are published: each one's $id is baseURL + its file name.
const baseURL = "https://raw.githubusercontent.com/lockbench/lockbench/main/schema/"

func main() {
	out := flag.String("out", ".", "directory to write the schema files into")
	root := flag.String("root", "..", "the module's root directory")
	flag.Parse()
	docs, err := generate(*root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
	for _, d := range docs {
		if err := os.WriteFile(filepath.Join(*out, d.name), d.text, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "gen:", err)
			os.Exit(1)
		}
	}
}

// doc is one generated schema file.
type doc struct {
	name string
	text []byte
}

// generate returns the schema files, in the order of schema.Names. root is the module's
// root directory, relative to the working directory or absolute.
func generate(root string) ([]doc, error) {
	r, err := reflector(root)
	if err != nil {
		return nil, err
	}
	result := r.Reflect(&report.Summary{})
	result.ID = baseURL + "result.json"
	result.Title = "lockbench result"
	result.Description = "A lockbench result file (--format json) of run, sweep or capacity, or of report merge. " +
		"Latencies are in µs, field names carry their units."
	pinVersion(result, "Summary")
	nonNegative(result, signedResultFields)

	comparison := r.Reflect(&report.Comparison{})
	comparison.ID = baseURL + "comparison.json"
	comparison.Title = "lockbench comparison"
	comparison.Description = "lockbench report compare --format json: run B measured against run A."
	pinVersion(comparison, "Comparison")

	var out []doc
	for _, s := range []struct {
		name   string
		schema *jsonschema.Schema
	}{
		{"result.json", result}, {"comparison.json", comparison}, {"profile.json", profileSchema()},
	} {
		text, err := marshal(s.schema)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.name, err)
		}
		out = append(out, doc{s.name, text})
	}
	return out, nil
}

// reflector reflects Go types with their Go comments as descriptions. Fields without
// omitempty are required; objects allow no other fields.
func reflector(root string) (*jsonschema.Reflector, error) {
	r := &jsonschema.Reflector{}
	// AddGoComments names a package by joining its base with the directory walked, relative
	// to the working directory: base is the module path of the working directory.
	wd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	absRoot, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	rel, err := filepath.Rel(absRoot, wd)
	if err != nil {
		return nil, err
	}
	base := path.Join(module, filepath.ToSlash(rel))
	if err := r.AddGoComments(base, filepath.Join(root, "report")); err != nil {
		return nil, fmt.Errorf("read report's comments: %w", err)
	}
	// Comments say "see Judge", "(docs/output.md ...)": keep them, but on one line each.
	for k, v := range r.CommentMap {
		r.CommentMap[k] = strings.Join(strings.Fields(v), " ")
	}
	return r, nil
}

// pinVersion makes the definition def's schema_version the constant report.SchemaVersion.
func pinVersion(s *jsonschema.Schema, def string) {
	d := s.Definitions[def]
	if d == nil || d.Properties == nil {
		return
	}
	if v, ok := d.Properties.Get("schema_version"); ok {
		v.Const = report.SchemaVersion
	}
}

// signedResultFields are the numbers of a result that may be negative, as "Definition.field":
// an event's time is before the measured window when it happened during the warm-up.
var signedResultFields = map[string]bool{"Event.t_s": true}

// nonNegative gives every integer and number property of s's definitions "minimum": 0 but
// those in signed: counts, latencies, rates, costs and times of a result are never negative,
// and a validator should say so when one is.
func nonNegative(s *jsonschema.Schema, signed map[string]bool) {
	for name, def := range s.Definitions {
		if def.Properties == nil {
			continue
		}
		for p := def.Properties.Oldest(); p != nil; p = p.Next() {
			if (p.Value.Type == "integer" || p.Value.Type == "number") && !signed[name+"."+p.Key] {
				p.Value.Minimum = "0"
			}
		}
	}
}

// marshal is s as indented JSON with a trailing newline.
func marshal(s *jsonschema.Schema) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// profileSchema describes a profile: the keys of profiles.TopFields at the top level, those
// of profiles.PhaseFields in each entry of phases, each value in its shape. Strategy names
// and fault kinds are offered for completion: every name the binary registers (the core,
// the services and the libraries, through internal/builtin) and faults.Forms. A family's
// variant (lua:DIR, driver:CMD) is allowed by its pattern.
func profileSchema() *jsonschema.Schema {
	phase := object(profiles.PhaseFields(), nil)
	s := object(profiles.TopFields(), phase)
	s.Version = jsonschema.Version
	s.ID = baseURL + "profile.json"
	s.Title = "lockbench profile"
	s.Description = "A lockbench scenario profile (lockbench run --profile FILE): the run flags' names and value syntax, " +
		"faults, and optional phases. An opening comment block documents it."
	return s
}

// object is a mapping holding fields; phase is the schema of one entry of a phases list.
func object(fields []profiles.Field, phase *jsonschema.Schema) *jsonschema.Schema {
	props := orderedmap.New[string, *jsonschema.Schema]()
	var required []string
	for _, f := range fields {
		v := value(f, phase)
		v.Description = f.Doc
		props.Set(f.Name, v)
		if f.Shape == profiles.ShapeStrategy {
			required = append(required, f.Name) // a phase names its strategy
		}
	}
	return &jsonschema.Schema{
		Type:                 "object",
		Properties:           props,
		Required:             required,
		AdditionalProperties: jsonschema.FalseSchema,
	}
}

// durationPattern is a Go duration with its unit ("10s", "1m30s", "500ms"), or 0.
const durationPattern = `^\s*-?(0|([0-9]*\.?[0-9]+(ns|us|µs|μs|ms|s|m|h))+)\s*$`

// value is the schema of one field's value.
func value(f profiles.Field, phase *jsonschema.Schema) *jsonschema.Schema {
	examples := []any{exampleValue(f.Example)}
	switch f.Shape {
	case profiles.ShapeInteger:
		return &jsonschema.Schema{Type: "integer", Examples: examples}
	case profiles.ShapeNumber:
		return &jsonschema.Schema{Type: "number", Examples: examples}
	case profiles.ShapeDuration:
		return &jsonschema.Schema{AnyOf: []*jsonschema.Schema{
			{Type: "string", Pattern: durationPattern},
			{Const: 0},
		}, Examples: examples}
	case profiles.ShapeStrategy:
		return strategyName()
	case profiles.ShapeStrategies:
		names := strategies.Names()
		list := `^\s*` + namePattern + `(\s*,\s*` + namePattern + `)*\s*$`
		return &jsonschema.Schema{AnyOf: []*jsonschema.Schema{
			{Type: "string", Enum: append(toAny(names), "all")},
			{Type: "string", Pattern: list},
			{Type: "array", Items: strategyName(), MinItems: ptr(uint64(1))},
		}, Examples: examples}
	case profiles.ShapeFaults:
		return &jsonschema.Schema{Type: "array", Items: faultSpec(), Examples: examples}
	case profiles.ShapePhases:
		return &jsonschema.Schema{Type: "array", Items: phase, MinItems: ptr(uint64(1))}
	}
	return &jsonschema.Schema{AnyOf: []*jsonschema.Schema{{Type: "string", MinLength: ptr(uint64(1))}, {Type: "number"}}, Examples: examples}
}

// namePattern is a strategy's name: a registered one, or a family's variant PREFIX:ARG
// (lua:DIR, driver:CMD), whose ARG holds no comma in a list.
const namePattern = `[a-z0-9-]+(:[^,]+)?`

// strategyName is one strategy name: the registered ones are offered.
func strategyName() *jsonschema.Schema {
	return &jsonschema.Schema{AnyOf: []*jsonschema.Schema{
		{Type: "string", Enum: toAny(strategies.Names())},
		{Type: "string", Pattern: `^` + namePattern + `$`},
	}}
}

// faultSpec is one fault spec, KIND:PARAMS, with the forms of faults.Forms as examples.
func faultSpec() *jsonschema.Schema {
	var kinds, forms []string
	for _, f := range faults.Forms() {
		kind, _, _ := strings.Cut(f, ":")
		kinds = append(kinds, regexp.QuoteMeta(kind))
		forms = append(forms, f)
	}
	return &jsonschema.Schema{
		Type:        "string",
		Pattern:     `^(` + strings.Join(kinds, "|") + `)(:.*)?$`,
		Description: "a fault spec: " + strings.Join(forms, "; "),
		Examples:    toAny(forms),
	}
}

// exampleValue decodes a Field.Example (YAML flow) as far as JSON goes, else keeps the text.
func exampleValue(s string) any {
	var v any
	if err := json.Unmarshal([]byte(s), &v); err == nil {
		return v
	}
	return s
}

func toAny[T any](v []T) []any {
	out := make([]any, len(v))
	for i, x := range v {
		out[i] = x
	}
	return out
}

func ptr[T any](v T) *T { return &v }
