// Package profiles holds lockbench's scenario files: YAML settings for `lockbench run`, one
// file per question a user asks ("which lock is fastest and safe on my machine?"), embedded
// in the binary and selected with --profile NAME|PATH.
//
// A profile's top-level keys are the run flag names, and its values use the flags' syntax:
//
//	# Which lock is fastest and still safe on my machine?   <- the opening comment block is
//	# ...                                                       the profile's documentation
//
//	strategy: [token, fenced]    # or "token,fenced", or "all"
//	workers: 50
//	hold: exp:1ms
//	duration: 5s                 # durations need a unit: 5 is an error, "5s" is not
//	faults:
//	  - holder-pause:p=0.05,d=600ms
//
// A profile may instead list explicit phases, each naming one strategy and the settings that
// differ for it (see [PhaseKeys]); then the top-level strategy must be absent, and the other
// top-level settings apply to every phase unless the phase sets its own. Top-level faults
// fire in every phase; a phase's faults fire in that phase as well.
//
// This package checks the file's shape: known keys, no duplicates, the right type for each
// value, durations that parse. Whether a value makes sense ("zipf:0.5", a watchdog on redlock)
// is for the run flags' own parsers; the caller reports their verdict at the value's Line
// with [Profile.ErrorAt].
package profiles

import (
	"embed"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// Value is one setting: Key is the run flag name, Value its text in flag syntax (durations
// as written, lists joined with ","), Line its 1-based line in the file.
type Value struct {
	Key, Value string
	Line       int
}

// Phase is one explicitly listed phase: one strategy with the settings that differ for it.
type Phase struct {
	Line     int    // where the phase starts in the file
	Strategy string // one strategy name, as written
	Label    string // tells phases of one strategy apart in reports; may be empty
	Values   []Value
	Faults   []Value // Key "fault"; added to the profile's top-level faults

	labelLine int // where label is set, 0 without one
}

// Profile is one parsed scenario file.
type Profile struct {
	Name   string  // the built-in's name, or the path given
	Source []byte  // the file as written
	Doc    string  // the opening comment block, '#' stripped
	Values []Value // top-level settings in file order (faults and phases excluded)
	Faults []Value // top-level faults, Key "fault", in file order
	Phases []Phase // explicit phases in file order; nil when the profile has none
}

// Lookup returns the top-level setting named key (a run flag name).
func (p *Profile) Lookup(key string) (Value, bool) {
	for _, v := range p.Values {
		if v.Key == key {
			return v, true
		}
	}
	return Value{}, false
}

// ErrorAt reports err, found while applying v, at v's line: the caller's flag parsers judge
// what a value means, and this keeps the file and line in the message.
func (p *Profile) ErrorAt(v Value, err error) *Error {
	return &Error{Profile: p.Name, Line: v.Line, Field: v.Key, Msg: err.Error(), Err: err}
}

// Info describes a built-in profile.
type Info struct {
	Name    string // what --profile takes
	Summary string // the first line of its Doc: the question it answers
}

//go:embed builtin/*.yaml
var builtinFS embed.FS

// builtinOrder is the order Builtins lists them in: the first run first, then from one hot
// key to many keys, the failure-oriented ones, and the broad comparison last. A file not
// named here is listed after these, by name.
var builtinOrder = []string{
	"quickstart", "hot-key", "flash-sale", "many-keys", "long-hold", "reentrant", "redlock", "all-seeds", "pitfalls", "libraries",
}

// Builtins lists the built-in profiles, quickstart first.
func Builtins() []Info {
	names := builtinNames()
	out := make([]Info, 0, len(names))
	for _, n := range names {
		src, _ := Source(n) // n comes from the embedded directory: it exists
		doc := docComment(src)
		summary, _, _ := strings.Cut(doc, "\n")
		out = append(out, Info{Name: n, Summary: summary})
	}
	return out
}

// Source returns a built-in profile's file as embedded, for `lockbench profiles show NAME`.
func Source(name string) ([]byte, error) {
	if isPath(name) {
		return readFile(name)
	}
	if name == "" || strings.ContainsAny(name, "/\\.") {
		return nil, unknownProfile(name)
	}
	src, err := builtinFS.ReadFile("builtin/" + name + ".yaml")
	if err != nil {
		return nil, unknownProfile(name)
	}
	return src, nil
}

// Load reads a built-in profile by name, or a profile file by path: a name containing a path
// separator or ending in .yaml or .yml is a path. Every error is an *Error.
func Load(nameOrPath string) (*Profile, error) {
	if !isPath(nameOrPath) {
		src, err := Source(nameOrPath)
		if err != nil {
			return nil, err
		}
		return Parse(nameOrPath, src)
	}
	src, err := readFile(nameOrPath)
	if err != nil {
		return nil, err
	}
	return Parse(nameOrPath, src)
}

// isPath tells a profile file's path from a built-in's name.
func isPath(s string) bool {
	ext := strings.ToLower(filepath.Ext(s))
	return strings.ContainsRune(s, '/') || strings.ContainsRune(s, filepath.Separator) || ext == ".yaml" || ext == ".yml"
}

// maxFileBytes bounds what Load reads: a profile is a page of settings, and a wrong path
// (a device, a log) must not be read to its end.
const maxFileBytes = 1 << 20

// readFile reads a profile file, naming what went wrong in terms of the profile.
func readFile(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, fileError(name, err)
	}
	defer f.Close()
	src, err := io.ReadAll(io.LimitReader(f, maxFileBytes+1))
	if err != nil {
		return nil, fileError(name, err)
	}
	if len(src) > maxFileBytes {
		return nil, &Error{Profile: name, Msg: "larger than 1 MiB: not a profile"}
	}
	return src, nil
}

// fileError turns an os error into an *Error without repeating the path, with a hint when
// the user wrote a built-in's name as a file name ("quickstart.yaml").
func fileError(name string, err error) *Error {
	msg := err.Error()
	var pe *fs.PathError
	if errors.As(err, &pe) {
		msg = pe.Err.Error()
	}
	e := &Error{Profile: name, Msg: "cannot read the file: " + msg, Err: err}
	base := strings.TrimSuffix(filepath.Base(name), filepath.Ext(name))
	if errors.Is(err, fs.ErrNotExist) && slices.Contains(builtinNames(), base) {
		e.Msg += "; for the built-in profile, use --profile " + base
	}
	return e
}

// builtinNames returns the embedded profiles' names in Builtins order.
func builtinNames() []string {
	entries, _ := builtinFS.ReadDir("builtin") // the directory is embedded: it exists
	var rest []string
	for _, e := range entries {
		n := strings.TrimSuffix(e.Name(), path.Ext(e.Name()))
		if !slices.Contains(builtinOrder, n) {
			rest = append(rest, n)
		}
	}
	names := make([]string, 0, len(entries))
	for _, n := range builtinOrder {
		if _, err := builtinFS.ReadFile("builtin/" + n + ".yaml"); err == nil {
			names = append(names, n)
		}
	}
	return append(names, rest...) // ReadDir sorts by name
}

// unknownProfile is the error for a name that is neither a built-in nor a path.
func unknownProfile(name string) *Error {
	return &Error{Msg: "unknown profile " + quote(name) + "; valid: " + strings.Join(builtinNames(), ", ") +
		", or a path to a .yaml file"}
}

// docComment returns the opening comment block of src, '#' and one following space stripped:
// the comment lines before the first blank or non-comment line. A paragraph break inside the
// block is a line holding only '#'.
func docComment(src []byte) string {
	text := strings.TrimLeft(string(src), "\ufeff \t\r\n")
	var lines []string
	for line := range strings.Lines(text) {
		t := strings.TrimSpace(line)
		if !strings.HasPrefix(t, "#") {
			break
		}
		t = strings.TrimPrefix(strings.TrimPrefix(t, "#"), " ")
		lines = append(lines, t)
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}
