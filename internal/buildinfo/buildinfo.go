// Package buildinfo says which lockbench this is.
package buildinfo

import "runtime/debug"

// Release is the release's version, set by package main from its -ldflags
// "-X main.version=v1.2.3"; "" in a development build, whose version comes from the
// module build info.
var Release = ""

// Version is lockbench's version: the release's, else the module's, else "dev", with the
// VCS revision when the build recorded one (v1.2.3+abc1234).
func Version() string {
	v, rev := Release, ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		if v == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			v = bi.Main.Version
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 7 {
				rev = s.Value[:7]
			}
		}
	}
	if v == "" {
		v = "dev"
	}
	if rev != "" {
		v += "+" + rev
	}
	return v
}
