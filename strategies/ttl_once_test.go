package strategies_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestTTLCheckedInOnePlace: a ttl is judged by one check, CheckTTL (a lease of at least a
// millisecond, or none), and against its strategy by Settle's checkNoTTL; no other code of
// the module makes an error about --ttl. A second check (a settings row's own bound, an
// engine's) would make a second message for one mistake, and let the two drift apart, as
// they had: the row's "want a duration > 0" and Settle's "must be at least 1ms".
func TestTTLCheckedInOnePlace(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (strings.HasPrefix(n, ".") || n == "node_modules" || n == "testdata" || n == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		for _, fn := range ttlErrors(t, path) {
			found = append(found, filepath.ToSlash(rel)+":"+fn)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"strategies/options.go:checkNoTTL", "strategies/ttl.go:CheckTTL"}
	slices.Sort(found)
	if !slices.Equal(found, want) {
		t.Errorf("errors about --ttl are made in %q; want only %q: judge a ttl with strategies.CheckTTL (or Settle)", found, want)
	}
}

// ttlErrors names the functions of the file at path that make an error about the ttl: an
// OptionError or ConfigError literal whose Field is "ttl", or BadSetting("ttl", ...).
func ttlErrors(t *testing.T, path string) []string {
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	isTTL := func(e ast.Expr) bool {
		lit, ok := e.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return false
		}
		s, _ := strconv.Unquote(lit.Value)
		return s == "ttl"
	}
	name := func(e ast.Expr) string {
		switch e := e.(type) {
		case *ast.Ident:
			return e.Name
		case *ast.SelectorExpr:
			return e.Sel.Name
		}
		return ""
	}
	var out []string
	for _, decl := range f.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok || fn.Body == nil {
			continue
		}
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CompositeLit:
				if tn := name(n.Type); tn == "OptionError" || tn == "ConfigError" {
					for _, el := range n.Elts {
						if kv, ok := el.(*ast.KeyValueExpr); ok && name(kv.Key) == "Field" && isTTL(kv.Value) {
							out = append(out, fn.Name.Name)
						}
					}
				}
			case *ast.CallExpr:
				if name(n.Fun) == "BadSetting" && len(n.Args) > 0 && isTTL(n.Args[0]) {
					out = append(out, fn.Name.Name)
				}
			}
			return true
		})
	}
	return out
}
