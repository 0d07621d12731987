package launch

import (
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/lockbench/lockbench/services"
	"github.com/lockbench/lockbench/workload"
)

// request binds a load command's settings and services as package main does, parses args
// and returns the request, to be planned.
func request(t *testing.T, command string, args ...string) *Request {
	t.Helper()
	r := &Request{Command: command, Strategy: "token", Format: "table"}
	fs := pflag.NewFlagSet(command, pflag.ContinueOnError)
	for _, s := range workload.Settings {
		if s.Is(workload.Flag) {
			s.Fill(&r.Config)
			fs.VarP(s.Value(&r.Config), s.Name, s.Short, s.Usage())
		}
	}
	fs.StringVar(&r.Out, "out", "", "")
	fs.StringVar(&r.Live, "live", "", "")
	fs.StringVar(&r.CPUProfile, "cpuprofile", "", "")
	r.Services = services.Bind(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	r.Flags = fs
	return r
}

// Capacity's steps run as runs in a --procs fleet's children, without capacity's own flags:
// the plan tells the children the request's ChildCommand and drops its ChildDrop.
func TestPlanTellsChildrenTheirCommand(t *testing.T) {
	r := request(t, "capacity", "--procs", "2", "--workers", "8", "--redis", "127.0.0.1:1")
	r.ChildCommand, r.ChildDrop = "run", []string{"slo", "start"}
	p, err := NewPlan(r)
	if err != nil {
		t.Fatal(err)
	}
	if p.Fleet == nil {
		t.Fatal("--procs 2 planned no fleet")
	}
	if p.Fleet.Command != "run" || !slices.Equal(p.Fleet.Drop, []string{"slo", "start"}) {
		t.Errorf("children told %q, dropping %q; want run, dropping slo and start", p.Fleet.Command, p.Fleet.Drop)
	}
	if p.Command != "capacity" {
		t.Errorf("the plan's own command is %q, want capacity", p.Command)
	}

	r = request(t, "run", "--procs", "2", "--workers", "8", "--redis", "127.0.0.1:1")
	if p, err = NewPlan(r); err != nil {
		t.Fatal(err)
	}
	if p.Fleet == nil || p.Fleet.Command != "run" || len(p.Fleet.Drop) != 0 {
		t.Errorf("run's fleet: %+v, want its own command and nothing dropped", p.Fleet)
	}
}

// What cannot run is refused by NewPlan, before anything starts, with the flag named:
// a fleet profiled (it profiles this process only), the report and the live lines both on
// stdout, a bad setting.
func TestPlanRefusesBeforeAnythingRuns(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"fleet profiled", []string{"--procs", "2", "--cpuprofile", t.TempDir() + "/cpu.out"}, "--cpuprofile"},
		{"two streams on stdout", []string{"--out", "-", "--live", "-"}, "--live"},
		{"a bad setting", []string{"--workers", "0"}, "--workers"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := NewPlan(request(t, "run", append(c.args, "--redis", "127.0.0.1:1")...))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("NewPlan(%q) = %v, want an error naming %s", c.args, err, c.want)
			}
		})
	}
}

// --out - is stdout: the plan's report goes to "".
func TestPlanOutDashIsStdout(t *testing.T) {
	p, err := NewPlan(request(t, "run", "--out", "-", "--redis", "127.0.0.1:1"))
	if err != nil {
		t.Fatal(err)
	}
	if p.Output.Out != "" {
		t.Errorf("--out - planned as %q, want \"\" (stdout)", p.Output.Out)
	}
}
