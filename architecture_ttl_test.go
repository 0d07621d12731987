package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// docs/architecture.md walks --ttl from its flag to the Lua ARGV with file:line references
// ("`settle` (`strategies/options.go:368`)"). Code moves under them, and a line number that
// still exists says nothing about whether it still points at what the text says. The walk
// therefore names, before each reference, the identifier the line holds: the test below reads
// the section and checks each reference's line (or range) against it.

// ttlWalkHeading starts the section; it ends at the first blank line.
const ttlWalkHeading = "**`--ttl` from the flag to the script**"

var (
	docCodeSpanRE = regexp.MustCompile("`([^`]+)`")
	// A reference: path/file.go:N, or :N for the file of the reference before it, and a
	// range N–M (or N-M).
	docLineRefRE = regexp.MustCompile(`^([\w./-]+\.go)?:(\d+)(?:[–-](\d+))?$`)
	// The name a code span gives: its last identifier, after dropping a trailing call or
	// type argument (judge(false) is judge, value[T] is value).
	docTrailingArgsRE = regexp.MustCompile(`(\([^()]*\)|\[[^\[\]]*\])$`)
	docIdentRE        = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`)
)

// ttlWalkRef is one file:line reference of the walk and the identifier named before it.
type ttlWalkRef struct {
	text       string // as written: `:371`
	path       string // resolved: strategies/options.go
	from, to   int    // the line range, from == to for one line
	ident      string // the identifier its line must hold
	identFrom  string // the code span the identifier came from
	docLine    int    // the line of docs/architecture.md it is on
	identFound bool   // a code span that names something came before it
}

// ttlWalkRefs reads the walk's references from doc.
func ttlWalkRefs(t *testing.T, doc string) []ttlWalkRef {
	t.Helper()
	lines := strings.Split(doc, "\n")
	start := -1
	for i, l := range lines {
		if strings.HasPrefix(l, ttlWalkHeading) {
			start = i
			break
		}
	}
	if start < 0 {
		t.Fatalf("docs/architecture.md has no paragraph starting %s", ttlWalkHeading)
	}
	var refs []ttlWalkRef
	var path, name, nameFrom string
	for i := start; i < len(lines) && strings.TrimSpace(lines[i]) != ""; i++ {
		for _, m := range docCodeSpanRE.FindAllStringSubmatch(lines[i], -1) {
			span := m[1]
			r := docLineRefRE.FindStringSubmatch(span)
			if r == nil {
				if id := spanIdent(span); id != "" {
					name, nameFrom = id, span
				}
				continue
			}
			if r[1] != "" {
				path = r[1]
			}
			from, _ := strconv.Atoi(r[2])
			to := from
			if r[3] != "" {
				to, _ = strconv.Atoi(r[3])
			}
			refs = append(refs, ttlWalkRef{text: span, path: path, from: from, to: to,
				ident: name, identFrom: nameFrom, docLine: i + 1, identFound: name != ""})
		}
	}
	return refs
}

// spanIdent is the identifier a code span names, "" for one that names none (a path, a
// message).
func spanIdent(span string) string {
	if strings.HasSuffix(span, ".go") || strings.HasSuffix(span, ".md") || strings.Contains(span, "/") {
		return ""
	}
	span = docTrailingArgsRE.ReplaceAllString(span, "")
	ids := docIdentRE.FindAllString(span, -1)
	if len(ids) == 0 {
		return ""
	}
	return ids[len(ids)-1]
}

func TestArchitectureTTLWalk(t *testing.T) {
	doc, err := os.ReadFile("docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	refs := ttlWalkRefs(t, string(doc))
	// The walk names some 130 lines; far fewer means the references were not recognised.
	if len(refs) < 80 {
		t.Fatalf("read %d file:line references in docs/architecture.md's --ttl walk; want the whole walk (80 or more): has its form changed?", len(refs))
	}
	files := map[string][]string{}
	for _, r := range refs {
		where := "docs/architecture.md:" + strconv.Itoa(r.docLine) + ": `" + r.text + "`"
		if r.path == "" {
			t.Errorf("%s: no file named before it", where)
			continue
		}
		if !r.identFound {
			t.Errorf("%s (%s): no identifier named before it", where, r.path)
			continue
		}
		src, ok := files[r.path]
		if !ok {
			raw, err := os.ReadFile(filepath.FromSlash(r.path))
			if err != nil {
				t.Errorf("%s: %v", where, err)
				files[r.path] = nil
				continue
			}
			src = strings.Split(string(raw), "\n")
			files[r.path] = src
		}
		if src == nil {
			continue
		}
		if r.from < 1 || r.to < r.from || r.to > len(src) {
			t.Errorf("%s: %s has %d lines", where, r.path, len(src))
			continue
		}
		word := regexp.MustCompile(`\b` + regexp.QuoteMeta(r.ident) + `\b`)
		held := false
		for _, l := range src[r.from-1 : r.to] {
			// Not a comment: the one above a declaration names it too, a line early.
			held = held || !strings.HasPrefix(strings.TrimSpace(l), "//") && word.MatchString(l)
		}
		if !held {
			t.Errorf("%s: %s:%d-%d does not hold %s (named by `%s`); the code moved: fix the line number, and the walk's \"as of\" commit",
				where, r.path, r.from, r.to, r.ident, r.identFrom)
		}
	}
}
