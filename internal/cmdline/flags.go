package cmdline

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/lockbench/lockbench/internal/usage"
)

// NewFlags returns a command's flag set: errors come back to the caller (exit 2, never a
// panic or os.Exit inside pflag), --help prints the usage to stdout.
func NewFlags(name, synopsis string, stdout io.Writer) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SortFlags = false
	fs.SetOutput(io.Discard)
	fs.Usage = func() {
		fmt.Fprintf(stdout, "Usage: lockbench %s\n\n%s\n", name, synopsis)
		if flags := fs.FlagUsagesWrapped(100); flags != "" {
			fmt.Fprintf(stdout, "\nFlags:\n%s", flags)
		}
	}
	return fs
}

// IsHelp reports whether err is --help's: pflag has printed the usage, and the command
// exits 0.
func IsHelp(err error) bool { return errors.Is(err, pflag.ErrHelp) }

// Parse parses args, which must all be flags; --help prints the usage (pflag does) and
// returns pflag.ErrHelp, which exits 0.
func Parse(fs *pflag.FlagSet, args []string) error {
	err := fs.Parse(args)
	if IsHelp(err) {
		return err // pflag has printed the usage
	}
	if err != nil {
		return FlagError(err)
	}
	if fs.NArg() > 0 {
		return usage.Errorf("unexpected argument %q", fs.Arg(0))
	}
	return nil
}

// ParseNames parses the flags of a command that takes names after them, and returns the
// names. Unlike Parse, a flag that does not parse keeps pflag's words.
func ParseNames(fs *pflag.FlagSet, args []string) ([]string, error) {
	err := fs.Parse(args)
	if IsHelp(err) {
		return nil, err // pflag has printed the usage
	}
	if err != nil {
		return nil, &usage.Error{Err: err}
	}
	return fs.Args(), nil
}

// ParseFiles parses flags and checks the number of file arguments (max < 0: no limit).
func ParseFiles(fs *pflag.FlagSet, args []string, minArgs, maxArgs int) error {
	if err := fs.Parse(args); err != nil {
		if IsHelp(err) {
			return err // pflag has printed the usage
		}
		return FlagError(err)
	}
	if n := fs.NArg(); n < minArgs || (maxArgs >= 0 && n > maxArgs) {
		want := fmt.Sprint(minArgs)
		switch {
		case maxArgs < 0:
			want = fmt.Sprintf("at least %d", minArgs)
		case maxArgs != minArgs:
			want = fmt.Sprintf("%d to %d", minArgs, maxArgs)
		}
		return usage.Errorf("want %s result file(s), got %d", want, n)
	}
	return nil
}

// FlagError is a flag parse error in the user's words, exit 2: a value that does not parse
// names the flag, the value and what is wanted, by the flag's type — never Go's
// `strconv.ParseInt: parsing "abc": invalid syntax` or `time: missing unit`. A value of
// lockbench's own type (--hold, --watchdog, ...) keeps its own message, which says it.
func FlagError(err error) error {
	var ive *pflag.InvalidValueError
	if !errors.As(err, &ive) {
		return &usage.Error{Err: err}
	}
	fl, value, cause := ive.GetFlag(), ive.GetValue(), ive.Unwrap()
	var ne *strconv.NumError
	goWords := errors.As(cause, &ne) || cause != nil && strings.HasPrefix(cause.Error(), "time: ")
	if !goWords && strings.HasPrefix(cause.Error(), "invalid --"+fl.Name+" ") {
		return usage.Errorf("%s", cause.Error()) // it names the flag and the value itself
	}
	want := wantOf(fl.Value.Type(), fl.DefValue)
	switch {
	case want == "" || !goWords:
		want = cause.Error()
	case ne != nil && errors.Is(ne.Err, strconv.ErrRange):
		want = "out of range: " + want
	}
	return usage.Errorf("invalid --%s %q: %s", fl.Name, value, want)
}

// wantOf says what a flag of pflag type typ wants, with its default as the example when
// it is one; "" for types of lockbench's own.
func wantOf(typ, def string) string {
	example := func(fallback string) string {
		if def == "" || def == "0" || def == "0s" || def == "[]" {
			return fallback
		}
		return def
	}
	switch typ {
	case "int", "int8", "int16", "int32", "int64":
		return "want a whole number (e.g. " + example("10") + ")"
	case "uint", "uint8", "uint16", "uint32", "uint64":
		return "want a whole number >= 0 (e.g. " + example("10") + ")"
	case "float", "float32", "float64":
		return "want a decimal number (e.g. " + example("1.5") + ")"
	case "duration":
		return "want a duration with a unit (e.g. " + example("10s") + "; units ns, us, ms, s, m, h)"
	case "bool":
		return "want true or false"
	}
	return ""
}

// Given is what the command line set in fs, taken now, before a profile sets more (after,
// fs.Changed cannot tell them apart): whether it set the flag named name, and its value as
// the flag prints it.
func Given(fs *pflag.FlagSet) func(name string) (string, bool) {
	set := map[string]string{}
	fs.Visit(func(fl *pflag.Flag) { set[fl.Name] = fl.Value.String() })
	return func(name string) (string, bool) {
		v, ok := set[name]
		return v, ok
	}
}

// Repeat is a flag the user gave, for a command line suggested to them: prefix+value
// when given (" --state /x"), "" when not, so the suggestion reaches what they named.
func Repeat(given bool, prefix, value string) string {
	if !given {
		return ""
	}
	return prefix + value
}
