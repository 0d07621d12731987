package profiles

import (
	"strconv"
	"strings"

	"github.com/lockbench/lockbench/internal/usage"
)

// Error is a profile that cannot be used: an unknown name, a file that cannot be read, or a
// setting that is not allowed where it is written. It is a usage error (the CLI exits 2).
//
// Error() reads "profile NAME line N: field F: MSG", leaving out the parts that are empty;
// an unknown name has only a Msg: `unknown profile "x"; valid: quickstart, ...`.
type Error struct {
	Profile string // the built-in's name or the path given; empty for an unknown name
	Line    int    // 1-based; 0 when the error is not about one line
	Field   string // the setting, e.g. "workers" or "phases[1].ttl"; empty when not one field
	Msg     string // what is wrong and, where it helps, what is valid
	Err     error  // the cause (an os error, a flag parser's error), if any; see Unwrap
}

// ExitCode is usage.ExitCode: the caller's input is wrong, as a command line reports it.
func (e *Error) ExitCode() int { return usage.ExitCode }

func (e *Error) Error() string {
	var head []string
	if e.Profile != "" {
		head = append(head, "profile "+e.Profile)
	}
	if e.Line > 0 {
		head = append(head, "line "+strconv.Itoa(e.Line))
	}
	var parts []string
	if len(head) > 0 {
		parts = append(parts, strings.Join(head, " "))
	}
	if e.Field != "" {
		parts = append(parts, "field "+e.Field)
	}
	if e.Msg != "" {
		parts = append(parts, e.Msg)
	}
	return strings.Join(parts, ": ")
}

// Unwrap returns the cause, so errors.Is(err, fs.ErrNotExist) works on a missing file.
func (e *Error) Unwrap() error { return e.Err }

// quote quotes s as Go would, for names in messages.
func quote(s string) string { return strconv.Quote(s) }

// unknownKey names an unknown key, suggests the nearest valid one when it is probably a
// typo, and lists the valid keys.
func unknownKey(key string, valid []string) string {
	msg := "unknown field " + quote(key)
	if near := nearest(key, valid); near != "" {
		msg += " (did you mean " + quote(near) + "?)"
	}
	return msg + "; valid: " + strings.Join(valid, ", ")
}

// nearest returns the entry of valid closest to s in edit distance, if it is close enough
// to be a typo of it (at most 2 edits, and fewer than half of s), else "".
func nearest(s string, valid []string) string {
	best, bestD := "", 3
	for _, v := range valid {
		if d := editDistance(s, v); d < bestD && 2*d < len(s) {
			best, bestD = v, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, in bytes (keys are ASCII).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
