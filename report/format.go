package report

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/lockbench/lockbench/internal/usage"
)

// Reporter writes s to w in one output format. A Reporter does not modify s.
type Reporter func(w io.Writer, s *Summary) error

// DefaultFormat is the format for humans, used when none is asked for.
const DefaultFormat = "table"

// reporters maps each --format name to its Reporter. Names are part of the CLI contract.
var reporters = map[string]Reporter{
	"table":    ResultsTable,
	"json":     JSON,
	"csv":      CSV,
	"markdown": Markdown,
}

// Formats returns the format names Lookup accepts, sorted.
func Formats() []string {
	names := make([]string, 0, len(reporters))
	for name := range reporters {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// Lookup returns the Reporter for format (case-insensitive). An unknown format gives a
// *FormatError, a usage error.
func Lookup(format string) (Reporter, error) {
	if r, ok := reporters[strings.ToLower(strings.TrimSpace(format))]; ok {
		return r, nil
	}
	return nil, &FormatError{Value: format}
}

// FormatError reports an output format that is not one of Formats(). It is a usage error:
// the CLI maps it to exit code 2 (errors.As).
type FormatError struct {
	Value string // the format asked for
}

// ExitCode is usage.ExitCode: the caller's input is wrong, as a command line reports it.
func (e *FormatError) ExitCode() int { return usage.ExitCode }

func (e *FormatError) Error() string {
	return fmt.Sprintf("invalid format %q: valid: %s", e.Value, strings.Join(Formats(), ", "))
}
