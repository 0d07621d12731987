package main

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/lockbench/lockbench/schema"
)

// strategiesPrinted are the names `lockbench strategies` prints, in its order.
func strategiesPrinted(t *testing.T) []string {
	t.Helper()
	code, out, stderr := cli("strategies", "--format", "json")
	if code != exitOK {
		t.Fatalf("strategies --format json: exit %d: %s", code, stderr)
	}
	var list []struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("strategies --format json: %v", err)
	}
	var names []string
	for _, s := range list {
		names = append(names, s.Name)
	}
	if len(names) == 0 {
		t.Fatal("strategies --format json listed none")
	}
	return names
}

// The profile schema offers every strategy `lockbench strategies` prints, and no other: its
// generator (schema/gen) sees the registries the binary has through internal/builtin, so a
// service or library package imported here but not there fails this test.
func TestSchemaOffersEveryStrategy(t *testing.T) {
	want := strategiesPrinted(t)
	slices.Sort(want)
	text, err := schema.File(schema.Profile)
	if err != nil {
		t.Fatal(err)
	}
	type names struct {
		AnyOf []struct {
			Enum []string `json:"enum"`
		} `json:"anyOf"`
	}
	var doc struct {
		Properties struct {
			Strategy names `json:"strategy"`
			Phases   struct {
				Items struct {
					Properties struct {
						Strategy names `json:"strategy"`
					} `json:"properties"`
				} `json:"items"`
			} `json:"phases"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(text, &doc); err != nil {
		t.Fatal(err)
	}
	for _, where := range []struct {
		key   string
		of    names
		extra []string
	}{
		{"strategy", doc.Properties.Strategy, []string{"all"}},
		{"phases[].strategy", doc.Properties.Phases.Items.Properties.Strategy, nil},
	} {
		if len(where.of.AnyOf) == 0 {
			t.Errorf("schema/profile.json: %s has no anyOf", where.key)
			continue
		}
		got := slices.DeleteFunc(slices.Clone(where.of.AnyOf[0].Enum), func(n string) bool { return slices.Contains(where.extra, n) })
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("schema/profile.json: %s offers %q;\nlockbench strategies prints %q\n(add the package to internal/builtin, then go generate ./schema)", where.key, got, want)
		}
	}
}
