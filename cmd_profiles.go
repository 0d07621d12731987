package main

import (
	"io"

	"github.com/lockbench/lockbench/internal/launch"
	"github.com/lockbench/lockbench/profiles"
	"github.com/lockbench/lockbench/report"
)

func profilesCmd(args []string, stdout, _ io.Writer) error {
	fs := newFlags("profiles [list | show NAME]", "Lists the built-in scenario profiles, one line each (also 'profiles list'); 'profiles show\nNAME' prints one. Run one with 'lockbench run --profile NAME'; flags given with it\noverride the profile.", stdout)
	if err := fs.Parse(args); err != nil {
		if isHelp(err) {
			return err // pflag has printed the usage
		}
		return flagError(err)
	}
	switch {
	case fs.NArg() == 0, fs.NArg() == 1 && fs.Arg(0) == "list":
		var rows [][]string
		for _, p := range profiles.Builtins() {
			rows = append(rows, []string{p.Name, p.Summary})
		}
		return report.Table(stdout, []string{"PROFILE", "QUESTION"}, rows)
	case fs.NArg() == 2 && fs.Arg(0) == "show":
		src, err := profiles.Source(fs.Arg(1))
		if err != nil {
			return err
		}
		if err := checkProfile(fs.Arg(1)); err != nil {
			return err // a profile that run would refuse is not shown as if it were fine
		}
		_, err = stdout.Write(src)
		return err
	}
	return usageErrorf("want 'profiles', 'profiles list' or 'profiles show NAME'")
}

// checkProfile resolves the profile named name as 'lockbench run --profile NAME' would,
// without running anything: the errors run would give, field and line named.
func checkProfile(name string) error {
	fs := newFlags("run [flags]", runSynopsis, io.Discard)
	f := loadFlags{launch.Request{Command: "run"}}
	f.bind(fs)
	f.Profile = name
	_, _, err := f.Resolve()
	return err
}
