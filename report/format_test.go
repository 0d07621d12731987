package report

import (
	"bytes"
	"errors"
	"slices"
	"testing"
)

func TestFormats(t *testing.T) {
	want := []string{"csv", "json", "markdown", "table"}
	if got := Formats(); !slices.Equal(got, want) {
		t.Errorf("Formats() = %v, want %v", got, want)
	}
	if !slices.Contains(Formats(), DefaultFormat) {
		t.Errorf("DefaultFormat %q is not a format", DefaultFormat)
	}
}

func TestLookup(t *testing.T) {
	for _, name := range []string{"table", "json", "csv", "markdown", "JSON", " csv "} {
		r, err := Lookup(name)
		if err != nil || r == nil {
			t.Errorf("Lookup(%q) = %v, %v; want a reporter", name, r, err)
			continue
		}
		var buf bytes.Buffer
		if err := r(&buf, testSummary()); err != nil || buf.Len() == 0 {
			t.Errorf("reporter %q wrote %d bytes, err %v", name, buf.Len(), err)
		}
	}
}

func TestLookupUnknown(t *testing.T) {
	r, err := Lookup("xml")
	if r != nil {
		t.Errorf("Lookup(xml) returned a reporter")
	}
	const want = `invalid format "xml": valid: csv, json, markdown, table`
	if err == nil || err.Error() != want {
		t.Fatalf("Lookup(xml) error = %v, want %q", err, want)
	}
	var fe *FormatError
	if !errors.As(err, &fe) || fe.Value != "xml" {
		t.Errorf("error %v is not a *FormatError with Value xml", err)
	}
}
