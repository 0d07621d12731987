package main

import (
	"fmt"
	"io"

	"github.com/lockbench/lockbench/faults"
)

func faultsCmd(args []string, stdout, _ io.Writer) error {
	fs := newFlags("faults", "Lists the faults --fault can inject (repeatable; also 'faults:' in profiles). Times (at=)\ncount from the start of each phase's measured window; nodes (node=) index the target's\ndata nodes.", stdout)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	_, err := fmt.Fprint(stdout, faults.Help())
	return err
}
