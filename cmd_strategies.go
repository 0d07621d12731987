package main

import (
	"encoding/json"
	"io"

	"github.com/lockbench/lockbench/internal/cmdline"
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
	names, err := cmdline.ParseNames(fs, args)
	if err != nil {
		return err
	}
	catalog, err := strategies.CatalogOf(names)
	if err != nil {
		return err
	}
	switch *format {
	case "json":
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(catalog)
	case "table":
		rows := make([][]string, 0, len(catalog))
		for _, i := range catalog {
			rows = append(rows, strategies.CatalogRow(i, *verbose))
		}
		return report.Table(stdout, strategies.CatalogHeader, rows)
	}
	return usageErrorf("invalid --format %q: valid: table, json", *format)
}
