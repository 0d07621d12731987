package main

import (
	"encoding/json"
	"io"

	"github.com/lockbench/lockbench/report"
	"github.com/lockbench/lockbench/strategies"
)

// strategiesCmd prints the catalog: what each strategy guarantees and how it fails.
func strategiesCmd(args []string, stdout, _ io.Writer) error {
	fs := newFlags("strategies [--format table|json]",
		"Lists every lock strategy lockbench implements, with its properties, its source article and\n"+
			"the weakness the tool can expose.", stdout)
	format := fs.StringP("format", "f", "table", "output format: table or json")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	catalog := strategies.Catalog()
	switch *format {
	case "json":
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(catalog)
	case "table":
		rows := make([][]string, 0, len(catalog))
		for _, i := range catalog {
			rows = append(rows, []string{i.Name, yes(i.SafeUnlock), yes(i.Reentrant), yes(i.AutoRenew),
				yes(i.Fencing), yes(i.MultiNode), i.Source, i.Weakness})
		}
		return report.Table(stdout, []string{"NAME", "SAFE UNLOCK", "REENTRANT", "AUTO-RENEW", "FENCING", "MULTI-NODE", "SOURCE", "WEAKNESS"}, rows)
	}
	return usageErrorf("invalid --format %q: valid: table, json", *format)
}

func yes(b bool) string {
	if b {
		return "yes"
	}
	return "-"
}
