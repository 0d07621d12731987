package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/resultschema"
)

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
	if err := resultschema.Check(data); err != nil {
		t.Fatalf("the JSON reporter's output fails the contract:\n%v", err)
	}
	if !bytes.HasSuffix(data, []byte("}\n")) || !bytes.HasPrefix(data, []byte("{\n  \"tool\": \"lockbench\",")) {
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
	if err := resultschema.Check(data); err != nil {
		t.Fatalf("nil lists fail the contract: %v", err)
	}
	if bytes.Contains(data, []byte("null")) {
		t.Errorf("JSON contains null:\n%s", data)
	}
	if s.Results[0].Timeline != nil {
		t.Errorf("JSON modified its input")
	}
	empty := jsonDoc(t, &Summary{Tool: "lockbench", StartedAt: time.Now()})
	if err := resultschema.Check(empty); err != nil {
		t.Errorf("a summary without results fails the contract: %v", err)
	}
}

// TestCheckJSONSchemaRejects proves the checker fails documents that break the contract,
// naming the path of the problem.
func TestCheckJSONSchemaRejects(t *testing.T) {
	tests := []struct {
		name     string
		edit     func(doc map[string]any)
		wantPath string
	}{
		{"missing tool", func(d map[string]any) { delete(d, "tool") }, "tool: missing"},
		{"wrong tool", func(d map[string]any) { d["tool"] = "other" }, "tool: is other"},
		{"started_at not RFC3339", func(d map[string]any) { d["started_at"] = "1 March 2025" }, "started_at: parsing time"},
		{"missing redis_version", func(d map[string]any) { delete(obj(d, "target"), "redis_version") }, "target.redis_version: missing"},
		{"config not an object", func(d map[string]any) { d["config"] = []any{} }, "config: is array, want object"},
		{"missing hold p999", func(d map[string]any) {
			delete(obj(obj(result(d, 2), "latency_us"), "hold"), "p999")
		}, "results[2].latency_us.hold.p999: missing"},
		{"fractional count", func(d map[string]any) { result(d, 0)["acquired"] = 1.5 }, "results[0].acquired: is number, want integer"},
		{"rate as string", func(d map[string]any) { result(d, 1)["acquire_rate"] = "fast" }, "results[1].acquire_rate: is string, want number"},
		{"missing jain", func(d map[string]any) { delete(obj(result(d, 0), "fairness"), "jain") }, "results[0].fairness.jain: missing"},
		{"timeline point without p99", func(d map[string]any) {
			delete(result(d, 0)["timeline"].([]any)[1].(map[string]any), "p99_us")
		}, "results[0].timeline[1].p99_us: missing"},
		{"timeline null", func(d map[string]any) { result(d, 0)["timeline"] = nil }, "results[0].timeline: is null, want array"},
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
			err = resultschema.Check(data)
			if err == nil {
				t.Fatalf("CheckJSONSchema accepted a document with %s", tt.name)
			}
			if !strings.Contains(err.Error(), tt.wantPath) {
				t.Errorf("error %q does not mention %q", err, tt.wantPath)
			}
		})
	}
	for _, bad := range []string{``, `[]`, `{"tool":`} {
		if resultschema.Check([]byte(bad)) == nil {
			t.Errorf("resultschema.Check(%q) = nil, want an error", bad)
		}
	}
}

// TestCheckJSONSchemaListsAllProblems: one run of the checker reports every problem.
func TestCheckJSONSchemaListsAllProblems(t *testing.T) {
	err := resultschema.Check([]byte(`{"tool":"lockbench","results":[{}]}`))
	if err == nil {
		t.Fatal("accepted a nearly empty document")
	}
	for _, want := range []string{"version: missing", "target: missing", "results[0].strategy: missing", "results[0].renewals: missing"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}

func obj(d map[string]any, key string) map[string]any { return d[key].(map[string]any) }

func result(d map[string]any, i int) map[string]any {
	return d["results"].([]any)[i].(map[string]any)
}
