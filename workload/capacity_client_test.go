package workload

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/lockbench/lockbench/internal/redistest"
	"github.com/lockbench/lockbench/report"
)

// capacityChildEnv names the Redis address a child of TestCapacityOneProcessorIsClientBound
// runs its search against.
const capacityChildEnv = "LOCKBENCH_TEST_CAPACITY_CHILD"

// A capacity search in a process of one P (GOMAXPROCS=1), against a server it leaves nearly
// idle, with an objective tighter than lockbench's own start delay: the answer names
// lockbench (or, on a machine busy with other work, the machine), never Redis or "latency",
// and marks the figure as the client's limit. The one P's timers run from an idle
// processor's epoll wait of whole milliseconds, so its arrivals start up to a millisecond
// late; the runtime's scheduling latency does not show that, and the answer read "bound
// by latency" with lockbench as the bound. The search runs in a child process, this test
// binary again, since GOMAXPROCS is the process's.
func TestCapacityOneProcessorIsClientBound(t *testing.T) {
	if addr := os.Getenv(capacityChildEnv); addr != "" {
		capacityChild(t, addr)
		return
	}
	srv, _ := redistest.Server(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestCapacityOneProcessorIsClientBound$", "-test.count=1")
	cmd.Env = append(os.Environ(), "GOMAXPROCS=1", capacityChildEnv+"="+srv.Addr)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("child: %v\n%s\n%s", err, out, stderr.Bytes())
	}
	var c report.Capacity
	found := false
	for sc := bufio.NewScanner(bytes.NewReader(out)); sc.Scan(); {
		if line, ok := strings.CutPrefix(sc.Text(), "ANSWER "); ok {
			if err := json.Unmarshal([]byte(line), &c); err != nil {
				t.Fatalf("child's answer %q: %v", line, err)
			}
			found = true
		}
	}
	if !found {
		t.Fatalf("child printed no answer:\n%s", out)
	}
	for _, st := range c.Steps {
		t.Logf("step %s %.0f/s: p99 %dµs, Redis CPU %.0f%%, lockbench %.0f%% of %d, host %.0f%%, round trip %dµs, scheduling p99 %.0fµs, start delay p99 %.0fµs, pass %v",
			st.Stage, st.Offered, st.P99US, st.RedisCPUPercent, st.LockbenchCPUPercent, st.LockbenchCores, st.HostCPUPercent, st.RoundTripUS, st.SchedP99US, st.StartDelayP99US, st.Pass)
	}
	if len(c.Steps) == 0 || c.Steps[0].LockbenchCores != 1 {
		t.Fatalf("answer %+v: want steps run on one P", c)
	}
	switch c.Bound {
	case "lockbench-scheduling", "lockbench-cpu", "host-cpu":
	default:
		t.Errorf("bound %q (%s), client bound %v: want lockbench (or the machine) named", c.Bound, c.BoundBy, c.ClientBound)
	}
	if !c.ClientBound || c.MaxRate > 0 && !strings.Contains(report.CapacityAnswer(c), "not Redis's capacity") {
		t.Errorf("answer %q, client bound %v: want the client's limit, never Redis's capacity", report.CapacityAnswer(c), c.ClientBound)
	}
}

// capacityChild is the child's search: a few short steps from 100/s, 20 workers on 1000
// keys (no contention), an objective of 300µs at p99.
func capacityChild(t *testing.T, addr string) {
	c := redistest.Client(t, addr)
	cfg := shortConfig("token")
	cfg.Keys, cfg.Workers = 1000, 20
	slo := SLO{P99: 300 * time.Microsecond, TimeoutRate: 0.5}
	ramp := Ramp{Start: 100, Factor: 2, MaxRate: 400, MinRate: 50, StepDuration: 500 * time.Millisecond, Bisections: 1}
	answers, _, err := Capacity(context.Background(), cfg, redisBackend(c), Options{}, slo, ramp, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(answers[0])
	if err != nil {
		t.Fatal(err)
	}
	os.Stdout.WriteString("ANSWER " + string(b) + "\n")
}
