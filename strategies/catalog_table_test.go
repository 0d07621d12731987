package strategies_test

import (
	"slices"
	"testing"

	"github.com/lockbench/lockbench/strategies"
)

// A catalog row says yes or - for each property, Redis for the lock core and the
// libraries, all for a strategy that honours every option, - for no native wait, and the
// whole wait only when verbose.
func TestCatalogRow(t *testing.T) {
	i := strategies.Info{Name: "x", SafeUnlock: true, Fencing: true, Source: "src", Weakness: "weak",
		NativeWait: "spin: a source"}
	want := []string{"x", "yes", "-", "-", "yes", "-", "Redis", "src", "spin", "all", "weak"}
	if got := strategies.CatalogRow(i, false); !slices.Equal(got, want) {
		t.Errorf("row %q, want %q", got, want)
	}
	want[8] = "spin: a source"
	if got := strategies.CatalogRow(i, true); !slices.Equal(got, want) {
		t.Errorf("verbose row %q, want %q", got, want)
	}
	i = strategies.Info{Name: "y", Service: "etcd", Applies: []string{"ttl", "wait"}}
	want = []string{"y", "-", "-", "-", "-", "-", "etcd", "", "-", "ttl, wait", ""}
	if got := strategies.CatalogRow(i, false); !slices.Equal(got, want) {
		t.Errorf("row %q, want %q", got, want)
	}
	if len(strategies.CatalogHeader) != len(want) {
		t.Errorf("header of %d columns, rows of %d", len(strategies.CatalogHeader), len(want))
	}
}

// CatalogOf lists the strategies named, in the order given, refuses a name that is none,
// and without names is the whole catalog.
func TestCatalogOf(t *testing.T) {
	got, err := strategies.CatalogOf([]string{"token", "set-nx-del"})
	if err != nil || len(got) != 2 || got[0].Name != "token" || got[1].Name != "set-nx-del" {
		t.Errorf("CatalogOf(token, set-nx-del) = %v, %v", got, err)
	}
	if _, err := strategies.CatalogOf([]string{"token", "no-such-lock"}); err == nil {
		t.Error("CatalogOf accepted no-such-lock")
	}
	if all, err := strategies.CatalogOf(nil); err != nil || len(all) != len(strategies.Catalog()) {
		t.Errorf("CatalogOf() = %d strategies, %v; want the catalog's %d", len(all), err, len(strategies.Catalog()))
	}
}
