package loadcheck

import (
	"testing"

	"github.com/spf13/pflag"

	"github.com/lockbench/lockbench/internal/usage"
	"github.com/lockbench/lockbench/services"
	"github.com/lockbench/lockbench/workload"
)

// The joint checks: a --strategy naming none, a run's strategy listed twice (a sweep may:
// it sweeps it once), --max-inflight without an open loop except under capacity's ramp.
func TestJoint(t *testing.T) {
	bound := services.Bind(pflag.NewFlagSet("x", pflag.ContinueOnError))
	closed := workload.Config{}
	closed.MaxInflight = 10
	for _, tc := range []struct {
		cfg  workload.Config
		load Load
		want string // "" = no error
	}{
		{workload.Config{}, Load{Command: "run", Strategy: " "}, `invalid --strategy " ": name at least one strategy (see 'lockbench strategies'), or all`},
		{workload.Config{}, Load{Command: "run", Strategy: "token,token"}, `invalid --strategy "token,token": token is listed twice`},
		{workload.Config{}, Load{Command: "sweep", Strategy: "token,token"}, ""},
		{closed, Load{Command: "run", Strategy: "token"}, "invalid --max-inflight 10: it bounds the open loop (--rate); in a closed loop --workers is what runs at once"},
		{closed, Load{Command: "capacity", Strategy: "token"}, ""},
	} {
		tc.load.Services = bound
		err := Joint(&tc.cfg, tc.load)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%+v: %v; want no error", tc.load, err)
		case tc.want != "" && (err == nil || err.Error() != tc.want || !usage.Is(err)):
			t.Errorf("%+v: %v; want the usage error %q", tc.load, err, tc.want)
		}
	}
}
