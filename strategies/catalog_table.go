package strategies

import "strings"

// CatalogHeader is the header of `lockbench strategies`' table; CatalogRow gives its rows.
var CatalogHeader = []string{"NAME", "SAFE UNLOCK", "REENTRANT", "AUTO-RENEW", "FENCING", "MULTI-NODE",
	"SERVICE", "SOURCE", "WAIT", "OPTIONS", "WEAKNESS"}

// CatalogRow is i's row of `lockbench strategies`' table (CatalogHeader): its properties
// as yes or -, the service it runs on, its source, its native wait (the short form, or
// the whole one with its source when verbose; - for none), the options it honours and its
// weakness.
func CatalogRow(i Info, verbose bool) []string {
	wait := i.NativeWaitShort()
	if verbose {
		wait = i.NativeWait
	}
	return []string{i.Name, yes(i.SafeUnlock), yes(i.Reentrant), yes(i.AutoRenew),
		yes(i.Fencing), yes(i.MultiNode), i.ServiceName(), i.Source, orDash(wait), i.AppliesList(), i.Weakness}
}

// ServiceName is the lock service i runs on: the lock core's strategies and the libraries
// run on Redis.
func (i Info) ServiceName() string {
	if i.Service == "" {
		return "Redis"
	}
	return i.Service
}

// AppliesList lists the lockbench options i honours: "all", or those a library measured as
// shipped maps onto its own (the others are ignored).
func (i Info) AppliesList() string {
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
