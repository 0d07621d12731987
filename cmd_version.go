package main

import (
	"fmt"
	"io"
	"runtime"

	"github.com/lockbench/lockbench/internal/buildinfo"
)

func versionString() string { return buildinfo.Version() }

func versionCmd(args []string, stdout, _ io.Writer) error {
	fs := newFlags("version", "Prints lockbench's version.", stdout)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	_, err := fmt.Fprintf(stdout, "lockbench %s (%s %s/%s)\n", versionString(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return err
}
