package launch

import (
	"bytes"
	"net"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/lockbench/lockbench/internal/proc"
	"github.com/lockbench/lockbench/services"
	_ "github.com/lockbench/lockbench/services/redis" // the home service
	"github.com/lockbench/lockbench/session"
	"github.com/lockbench/lockbench/workload"
)

// planTo is the plan of a one-phase token run on the Redis at addr, with --metrics-addr
// on a free port.
func planTo(t *testing.T, addr string) *Plan {
	t.Helper()
	var cfg workload.Config
	for _, s := range workload.Settings {
		s.Fill(&cfg)
	}
	cfg.Strategies = []string{"token"}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	faults, err := session.NewPlan(&cfg, cfg.Duration)
	if err != nil {
		t.Fatal(err)
	}
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	bound := services.Bind(fs)
	if err := fs.Parse([]string{"--redis", addr, "--connect-timeout", "1s"}); err != nil {
		t.Fatal(err)
	}
	return &Plan{Command: "run", Config: cfg, Faults: faults, Services: bound, Quiet: true,
		Live: Live{MetricsAddr: "127.0.0.1:0"}}
}

// A start that fails half-way (the target cannot be reached) undoes what it had opened,
// through the same path as the end of a run: the metrics endpoint it had started listening
// on is closed again. Close may be called again.
func TestStartThatFailsUndoesWhatItOpened(t *testing.T) {
	port, err := proc.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	r, err := Start(planTo(t, "127.0.0.1:"+strconv.Itoa(port)), &stdout, &stderr) // nothing listens there
	if err == nil {
		r.Close()
		t.Fatal("Start reached a Redis where none listens")
	}
	m := regexp.MustCompile(`metrics at http://(\S+)/metrics`).FindStringSubmatch(stderr.String())
	if m == nil {
		t.Fatalf("the endpoint was not started first: stderr %q", stderr.String())
	}
	if c, err := net.Dial("tcp", m[1]); err == nil {
		c.Close()
		t.Errorf("after the failed start, %s still listens", m[1])
	}
	if !strings.Contains(err.Error(), strconv.Itoa(port)) {
		t.Errorf("error %v; want the unreachable address", err)
	}
}
