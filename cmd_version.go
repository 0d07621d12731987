package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// version is set at release builds with -ldflags "-X main.version=v1.2.3"; otherwise it is
// read from the module build info.
var version = ""

func versionString() string {
	v, rev := version, ""
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

func versionCmd(args []string, stdout, _ io.Writer) error {
	fs := newFlags("version", "Prints lockbench's version.", stdout)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	_, err := fmt.Fprintf(stdout, "lockbench %s (%s %s/%s)\n", versionString(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return err
}
