// Package redact makes addresses fit to print: every lock service's errors and notes name
// the address the user gave without its password. It imports nothing of lockbench, so that
// any service package may use it.
package redact

import "strings"

// Addr returns an address fit to print: the password of a URL (what follows the first
// colon of the user information) becomes ***; user information without a colon, which
// redis-cli reads as a password, becomes *** as a whole, as does whatever precedes an @ in
// an address that is not a URL. It works on malformed addresses too: everything up to the
// last @ counts as user information.
func Addr(s string) string {
	start := 0
	if i := strings.Index(s, "://"); i >= 0 {
		start = i + len("://")
	}
	at := strings.LastIndex(s, "@")
	if at < start {
		return s
	}
	user, _, hasPassword := strings.Cut(s[start:at], ":")
	if start == 0 || !hasPassword {
		return s[:start] + "***" + s[at:]
	}
	return s[:start] + user + ":***" + s[at:]
}

// Param replaces the value of the first name= parameter of s (a URL's query, or a
// key=value connection string) with ***, up to the next & or space.
func Param(s, name string) string {
	i := strings.Index(s, name+"=")
	if i < 0 {
		return s
	}
	i += len(name) + 1
	j := strings.IndexAny(s[i:], "& ")
	if j < 0 {
		j = len(s) - i
	}
	return s[:i] + "***" + s[i+j:]
}
