package main

import (
	"encoding/json"
	"errors"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/lockbench/lockbench/internal/usage"
	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/strategies"
)

// strategiesCmd prints the catalog: what each strategy guarantees and how it fails.
func strategiesCmd(args []string, stdout, _ io.Writer) error {
	fs := newFlags("strategies [--format table|json] [--verbose] [NAME...]",
		"Lists every lock strategy lockbench implements, with its properties, the service it runs on,\n"+
			"its source (a seed article, or a library and its version), its own wait (what --wait native,\n"+
			"the default, does for it; spin, backoff and pubsub are lockbench's what-ifs), the lockbench\n"+
			"options it honours (all, or for a library measured as shipped those it maps onto its own)\n"+
			"and the weakness the tool can expose. Names (token, lua:DIR, ...) list only those: a lock\n"+
			"of your own shows what lockbench reads from its files.", stdout)
	format := fs.StringP("format", "f", "table", "output format: table or json")
	verbose := fs.BoolP("verbose", "v", false, "show each strategy's whole native wait, with its source, in the WAIT column (json always has it)")
	names, err := parseNames(fs, args)
	if err != nil {
		return err
	}
	catalog := strategies.Catalog()
	if len(names) > 0 {
		catalog = catalog[:0]
		for _, n := range names {
			i, err := strategies.Resolve(n)
			if err != nil {
				return err
			}
			catalog = append(catalog, i)
		}
	}
	switch *format {
	case "json":
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(catalog)
	case "table":
		rows := make([][]string, 0, len(catalog))
		for _, i := range catalog {
			wait := i.NativeWaitShort()
			if *verbose {
				wait = i.NativeWait
			}
			rows = append(rows, []string{i.Name, yes(i.SafeUnlock), yes(i.Reentrant), yes(i.AutoRenew),
				yes(i.Fencing), yes(i.MultiNode), service(i), i.Source, orDash(wait), applies(i), i.Weakness})
		}
		return report.Table(stdout, []string{"NAME", "SAFE UNLOCK", "REENTRANT", "AUTO-RENEW", "FENCING", "MULTI-NODE",
			"SERVICE", "SOURCE", "WAIT", "OPTIONS", "WEAKNESS"}, rows)
	}
	return usageErrorf("invalid --format %q: valid: table, json", *format)
}

// parseNames is parseFlags for a command that takes names after its flags.
func parseNames(fs *pflag.FlagSet, args []string) ([]string, error) {
	err := fs.Parse(args)
	if errors.Is(err, pflag.ErrHelp) {
		return nil, err
	}
	if err != nil {
		return nil, &usage.Error{Err: err}
	}
	return fs.Args(), nil
}

// service is the lock service a strategy runs on; the lock core's and the libraries' run on
// Redis.
func service(i strategies.Info) string {
	if i.Service == "" {
		return "Redis"
	}
	return i.Service
}

// applies lists the lockbench options a strategy honours: "all", or those a library
// measured as shipped maps onto its own (the others are ignored).
func applies(i strategies.Info) string {
	if i.Applies == nil {
		return "all"
	}
	return strings.Join(i.Applies, ", ")
}

func yes(b bool) string {
	if b {
		return "yes"
	}
	return "-"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
