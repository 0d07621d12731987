package schema

import (
	"bytes"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/lockbench/lockbench/profiles"
)

// modeline is the line that points editors at the profile schema, relative to
// profiles/builtin/.
const modeline = "# yaml-language-server: $schema=../../schema/profile.json"

// decodeYAML decodes a profile as a YAML-aware validator sees it.
func decodeYAML(t *testing.T, src []byte) any {
	t.Helper()
	var v any
	if err := yaml.Unmarshal(src, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// Every built-in profile validates against profile.json and names it for editors.
func TestBuiltinProfilesValidate(t *testing.T) {
	for _, b := range profiles.Builtins() {
		src, err := profiles.Source(b.Name)
		if err != nil {
			t.Fatal(err)
		}
		if err := ValidateValue(Profile, decodeYAML(t, src)); err != nil {
			t.Errorf("%s: %v", b.Name, err)
		}
		if !bytes.Contains(src, []byte("\n"+modeline+"\n")) {
			t.Errorf("%s: lacks the line %q", b.Name, modeline)
		}
		p, err := profiles.Load(b.Name)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(p.Doc, "yaml-language-server") {
			t.Errorf("%s: the modeline leaked into the profile's documentation", b.Name)
		}
	}
}

// The schema and the profiles parser agree on what a profile may hold: each case is
// accepted by both or refused by both.
func TestProfileSchemaAgreesWithParser(t *testing.T) {
	tests := []struct {
		name, src string
		ok        bool
	}{
		{"plain", "strategy: token\nworkers: 10\nduration: 2s\n", true},
		{"list of strategies", "strategy: [token, fenced]\n", true},
		{"comma list", "strategy: token,fenced\n", true},
		{"all", "strategy: all\n", true},
		{"zero duration", "warmup: 0\n", true},
		{"compound duration", "duration: 1m30s\n", true},
		{"phases", "duration: 1s\nphases:\n  - strategy: token\n    label: a\n    ttl: 5s\n  - strategy: fenced\n", true},
		{"faults", "faults:\n  - holder-pause:p=0.05,d=600ms\n", true},
		{"unknown key", "strategy: token\nworkerz: 10\n", false},
		{"duration without unit", "duration: 5\n", false},
		{"workers as text", "workers: many\n", false},
		{"workers fractional", "workers: 1.5\n", false},
		{"phase without strategy", "phases:\n  - ttl: 5s\n", false},
		{"unknown phase key", "phases:\n  - strategy: token\n    duration: 5s\n", false},
		{"faults not a list", "faults: holder-pause:p=0.05,d=600ms\n", false},
		{"strategy empty list", "strategy: []\n", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			schemaErr := ValidateValue(Profile, decodeYAML(t, []byte(tt.src)))
			_, parseErr := profiles.Parse("case.yaml", []byte(tt.src))
			if (schemaErr == nil) != tt.ok {
				t.Errorf("schema: %v, want ok=%v", schemaErr, tt.ok)
			}
			if (parseErr == nil) != tt.ok {
				t.Errorf("parser: %v, want ok=%v", parseErr, tt.ok)
			}
		})
	}
}

// Validate refuses what is not JSON, and names a file it does not have.
func TestValidateErrors(t *testing.T) {
	if err := Validate(Result, []byte(`{"tool":`)); err == nil {
		t.Error("Validate(truncated JSON) = nil")
	}
	if err := Validate("nope.json", []byte(`{}`)); err == nil || !strings.Contains(err.Error(), "nope.json") {
		t.Errorf("Validate(unknown schema) = %v", err)
	}
	if err := Validate(Result, []byte(`{}`)); err == nil || !strings.Contains(err.Error(), "schema_version") {
		t.Errorf("Validate(Result, {}) = %v, want it to name the missing schema_version", err)
	}
}
