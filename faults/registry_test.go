package faults

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/lockbench/lockbench/strategies"
)

// Every registered kind shows in the catalog, in catalog order: its form in Forms and in
// Help, on one line with its summary.
func TestEveryKindIsInTheCatalog(t *testing.T) {
	ks, forms, help := kinds(), Forms(), Help()
	if len(ks) == 0 || len(forms) != len(ks) {
		t.Fatalf("%d kinds registered, %d forms: %q", len(ks), len(forms), forms)
	}
	for i, k := range ks {
		if len(k.required)+len(k.optional) == 0 {
			t.Errorf("%s has no fields", k.name)
		}
		for _, f := range slices.Concat(k.required, k.optional) {
			if f.name == "" || f.placeholder == "" || f.parse == nil {
				t.Errorf("%s: field %+v needs a name, a placeholder and a parse", k.name, f)
			}
		}
		if !strings.HasPrefix(forms[i], string(k.name)+":") {
			t.Errorf("Forms()[%d] = %q, want %s's form", i, forms[i], k.name)
		}
		first, _, _ := strings.Cut(k.summary, "\n")
		if strings.TrimSpace(first) == "" {
			t.Errorf("%s has no summary", k.name)
		}
		if line := "  " + forms[i]; !strings.Contains(help, line) || !strings.Contains(help[strings.Index(help, line):], " "+first+"\n") {
			t.Errorf("Help() does not show %q with its summary %q:\n%s", forms[i], first, help)
		}
		if i > 0 && ks[i-1].order >= k.order {
			t.Errorf("%s (order %d) is listed after %s (order %d)", k.name, k.order, ks[i-1].name, ks[i-1].order)
		}
	}
}

// An unknown fault is a usage error that names every registered one.
func TestParseUnknownKindNamesTheRegistered(t *testing.T) {
	_, err := Parse("meteor:p=1")
	var se *SpecError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), `unknown fault "meteor"`) {
		t.Fatalf(`Parse("meteor:p=1") = %v, want a *SpecError saying unknown fault "meteor"`, err)
	}
	for _, k := range kinds() {
		if !strings.Contains(err.Error(), "\n  "+string(k.name)+":") {
			t.Errorf("the unknown-fault error does not name %s:\n%s", k.name, err)
		}
	}
}

// A registration the catalog could not use panics at init time.
func TestRegisterRefusesMistakes(t *testing.T) {
	badDefault := field{name: "x", placeholder: "X", def: "?", parse: func(*Spec, string) error { return errors.New("no") }}
	for name, k := range map[string]kind{
		"empty name":         {order: 1001, summary: "s"},
		"duplicate name":     {name: Kill, order: 1002, summary: "s"},
		"duplicate order":    {name: "test-order", order: lookup(Kill).order, summary: "s"},
		"no summary":         {name: "test-summary", order: 1003},
		"a field twice":      {name: "test-fields", order: 1004, summary: "s", required: []field{fieldP, fieldP}},
		"default that fails": {name: "test-default", order: 1005, summary: "s", optional: []field{badDefault}},
		"check without play": {name: "test-check", order: 1006, summary: "s", check: func(Spec, *Nodes) error { return nil }},
		"proxy without play": {name: "test-proxy", order: 1007, summary: "s", proxy: true},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("register with %s did not panic", name)
				}
			}()
			register(k)
		}()
		if k.name != "" && k.name != Kill && lookup(k.name) != nil {
			t.Errorf("register with %s left %s registered", name, k.name)
		}
	}
}

// chain keeps every hook of strategies.Hooks: a hook it forgot would silently turn a fault
// off. Each hook set on either side, or on both, is set in the chain.
func TestChainKeepsEveryHook(t *testing.T) {
	typ := reflect.TypeFor[strategies.Hooks]()
	for i := range typ.NumField() {
		var h strategies.Hooks
		fn := reflect.ValueOf(&h).Elem().Field(i)
		fn.Set(reflect.MakeFunc(fn.Type(), func([]reflect.Value) []reflect.Value {
			out := make([]reflect.Value, fn.Type().NumOut())
			for j := range out {
				out[j] = reflect.Zero(fn.Type().Out(j))
			}
			return out
		}))
		for _, c := range []strategies.Hooks{chain(h, strategies.Hooks{}), chain(strategies.Hooks{}, h), chain(h, h)} {
			if reflect.ValueOf(c).Field(i).IsNil() {
				t.Errorf("chain drops %s", typ.Field(i).Name)
			}
		}
	}
}
