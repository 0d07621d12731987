package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/schema"
)

// validateResult checks a JSON result against schema/result.json.
func validateResult(data []byte) error { return schema.Validate(schema.Result, data) }

// jsonDoc runs the JSON reporter on s and returns its output.
func jsonDoc(t *testing.T, s *Summary) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := JSON(&buf, s); err != nil {
		t.Fatalf("JSON: %v", err)
	}
	return buf.Bytes()
}

func TestJSONSchema(t *testing.T) {
	data := jsonDoc(t, testSummary())
	if err := validateResult(data); err != nil {
		t.Fatalf("the JSON reporter's output fails schema/result.json:\n%v", err)
	}
	if !bytes.HasSuffix(data, []byte("}\n")) || !bytes.HasPrefix(data, []byte("{\n  \"tool\": \"lockbench\",\n  \"schema_version\": 1,")) {
		t.Errorf("want 2-space indented JSON with a trailing newline, got:\n%.80s", data)
	}

	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	started, err := time.Parse(time.RFC3339, doc["started_at"].(string))
	if err != nil || !started.Equal(testSummary().StartedAt) {
		t.Errorf("started_at = %v (%v), want %v", doc["started_at"], err, testSummary().StartedAt)
	}
	results := doc["results"].([]any)
	if len(results) != 3 {
		t.Fatalf("%d results, want 3", len(results))
	}
	overlaps := results[1].(map[string]any)["safety"].(map[string]any)["overlaps"]
	if overlaps != 3.0 {
		t.Errorf("results[1].safety.overlaps = %v, want 3", overlaps)
	}
	p99 := results[0].(map[string]any)["latency_us"].(map[string]any)["acquire"].(map[string]any)["p99"]
	if p99 != 1240.0 {
		t.Errorf("results[0].latency_us.acquire.p99 = %v, want 1240", p99)
	}
}

// TestJSONEmptyLists: lists the engine left nil are [] in JSON, never null, and the
// document still passes the contract.
func TestJSONEmptyLists(t *testing.T) {
	s := testSummary()
	s.Target.Addrs = nil
	s.Results[0].Timeline = nil
	data := jsonDoc(t, s)
	if err := validateResult(data); err != nil {
		t.Fatalf("nil lists fail the schema: %v", err)
	}
	if bytes.Contains(data, []byte("null")) {
		t.Errorf("JSON contains null:\n%s", data)
	}
	if s.Results[0].Timeline != nil {
		t.Errorf("JSON modified its input")
	}
	empty := jsonDoc(t, &Summary{Tool: "lockbench", StartedAt: time.Now()})
	if err := validateResult(empty); err != nil {
		t.Errorf("a summary without results fails the schema: %v", err)
	}
}

// TestJSONSchemaRejects proves the schema fails documents that break the contract, naming
// the location of the problem.
func TestJSONSchemaRejects(t *testing.T) {
	tests := []struct {
		name     string
		edit     func(doc map[string]any)
		wantPath string
	}{
		{"missing tool", func(d map[string]any) { delete(d, "tool") }, "'tool'"},
		{"wrong tool", func(d map[string]any) { d["tool"] = "other" }, "/tool"},
		{"no schema_version (an older lockbench)", func(d map[string]any) { delete(d, "schema_version") }, "'schema_version'"},
		{"another schema_version", func(d map[string]any) { d["schema_version"] = 2 }, "/schema_version"},
		{"started_at not RFC3339", func(d map[string]any) { d["started_at"] = "1 March 2025" }, "/started_at"},
		{"missing redis_version", func(d map[string]any) { delete(obj(d, "target"), "redis_version") }, "'redis_version'"},
		{"config not an object", func(d map[string]any) { d["config"] = []any{} }, "/config"},
		{"missing hold p999", func(d map[string]any) {
			delete(obj(obj(result(d, 2), "latency_us"), "hold"), "p999")
		}, "/results/2/latency_us/hold"},
		{"fractional count", func(d map[string]any) { result(d, 0)["acquired"] = 1.5 }, "/results/0/acquired"},
		{"rate as string", func(d map[string]any) { result(d, 1)["acquire_rate_per_s"] = "fast" }, "/results/1/acquire_rate_per_s"},
		{"rate under its old name", func(d map[string]any) {
			result(d, 1)["acquire_rate"] = result(d, 1)["acquire_rate_per_s"]
			delete(result(d, 1), "acquire_rate_per_s")
		}, "/results/1"},
		{"an unknown field", func(d map[string]any) { result(d, 0)["acquire_rte_per_s"] = 1.0 }, "acquire_rte_per_s"},
		{"missing jain", func(d map[string]any) { delete(obj(result(d, 0), "fairness"), "jain") }, "/results/0/fairness"},
		{"timeline point without p99", func(d map[string]any) {
			delete(result(d, 0)["timeline"].([]any)[1].(map[string]any), "p99_us")
		}, "/results/0/timeline/1"},
		{"timeline null", func(d map[string]any) { result(d, 0)["timeline"] = nil }, "/results/0/timeline"},
		// The README: every document opens with kind; counts and latencies are never negative.
		{"missing kind", func(d map[string]any) { delete(d, "kind") }, "'kind'"},
		{"negative count", func(d map[string]any) { result(d, 0)["timeouts"] = -1 }, "/results/0/timeouts"},
		{"negative latency", func(d map[string]any) {
			obj(obj(result(d, 0), "latency_us"), "acquire")["p99"] = -5
		}, "/results/0/latency_us/acquire/p99"},
		{"negative rate", func(d map[string]any) { result(d, 1)["acquire_rate_per_s"] = -0.5 }, "/results/1/acquire_rate_per_s"},
		{"negative cost", func(d map[string]any) { obj(result(d, 0), "redis")["cpu_us"] = -3 }, "/results/0/redis/cpu_us"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var doc map[string]any
			if err := json.Unmarshal(jsonDoc(t, testSummary()), &doc); err != nil {
				t.Fatal(err)
			}
			tt.edit(doc)
			data, err := json.Marshal(doc)
			if err != nil {
				t.Fatal(err)
			}
			err = validateResult(data)
			if err == nil {
				t.Fatalf("the schema accepted a document with %s", tt.name)
			}
			if !strings.Contains(err.Error(), tt.wantPath) {
				t.Errorf("error %q does not mention %q", err, tt.wantPath)
			}
		})
	}
	for _, bad := range []string{``, `[]`, `{"tool":`} {
		if validateResult([]byte(bad)) == nil {
			t.Errorf("validate(%q) = nil, want an error", bad)
		}
	}
}

// TestJSONSchemaListsAllProblems: one validation reports every problem.
func TestJSONSchemaListsAllProblems(t *testing.T) {
	err := validateResult([]byte(`{"tool":"lockbench","schema_version":1,"results":[{}]}`))
	if err == nil {
		t.Fatal("accepted a nearly empty document")
	}
	for _, want := range []string{"'version'", "'target'", "'strategy'", "'renewals'"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}

// TestJSONWritesSchemaVersion: whatever the Summary says (one read from an older file says
// 0), the document is in this release's schema.
func TestJSONWritesSchemaVersion(t *testing.T) {
	s := testSummary()
	s.SchemaVersion = 0
	var doc struct {
		SchemaVersion *int `json:"schema_version"`
	}
	if err := json.Unmarshal(jsonDoc(t, s), &doc); err != nil || doc.SchemaVersion == nil || *doc.SchemaVersion != SchemaVersion {
		t.Errorf("schema_version = %v (%v), want %d", doc.SchemaVersion, err, SchemaVersion)
	}
}

// TestJSONWritesKind: a Summary built without a kind is a run, and its document says so.
func TestJSONWritesKind(t *testing.T) {
	s := testSummary()
	s.Kind = ""
	var doc map[string]any
	if err := json.Unmarshal(jsonDoc(t, s), &doc); err != nil {
		t.Fatal(err)
	}
	if doc["kind"] != KindRun {
		t.Errorf("kind = %v, want %q", doc["kind"], KindRun)
	}
	// An event of the warm-up has a negative time: the one number that may be below 0.
	s.Results[0].Events = []Event{{TS: -0.5, Fault: "kill", What: "node 0 killed"}}
	if err := validateResult(jsonDoc(t, s)); err != nil {
		t.Errorf("a warm-up event fails the schema: %v", err)
	}
}

// TestReadLegacyNames: a result file of schema version 0 (before units were in every name)
// still reads, its old names landing in the renamed fields; the new name wins when a file
// has both.
func TestReadLegacyNames(t *testing.T) {
	old := `{"tool":"lockbench","version":"v0.9.0","config":{"rate":500},
		"results":[{"strategy":"token","acquire_rate":123.5,"offered_rate":500}],
		"capacity":[{"strategy":"token","max_rate":4200,"steps":[{"offered":5000,"achieved":4100,"timeout_rate":0.25}]}]}`
	var s Summary
	if err := json.Unmarshal([]byte(old), &s); err != nil {
		t.Fatal(err)
	}
	if s.SchemaVersion != 0 || s.Config.Rate != 500 || s.Results[0].AcquireRate != 123.5 || s.Results[0].OfferedRate != 500 {
		t.Errorf("read %+v / %+v", s.Config, s.Results[0])
	}
	c := s.Capacity[0]
	if c.MaxRate != 4200 || c.Steps[0].Offered != 5000 || c.Steps[0].Achieved != 4100 || c.Steps[0].TimeoutRate != 0.25 {
		t.Errorf("capacity read %+v", c)
	}
	var both Result
	if err := json.Unmarshal([]byte(`{"acquire_rate":1,"acquire_rate_per_s":2}`), &both); err != nil || both.AcquireRate != 2 {
		t.Errorf("both names: rate %v (%v), want the new name's 2", both.AcquireRate, err)
	}
	// Re-written, the old file is in the current schema.
	if err := validateResult(jsonDoc(t, &s)); err == nil {
		t.Log("(a sparse old file need not validate: it lacks required fields)")
	}
	if b := jsonDoc(t, &s); bytes.Contains(b, []byte(`"acquire_rate"`)) || !bytes.Contains(b, []byte(`"acquire_rate_per_s": 123.5`)) {
		t.Errorf("re-written with old names:\n%s", b)
	}
}

func obj(d map[string]any, key string) map[string]any { return d[key].(map[string]any) }

func result(d map[string]any, i int) map[string]any {
	return d["results"].([]any)[i].(map[string]any)
}
