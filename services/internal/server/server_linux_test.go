//go:build linux

package server

import (
	"context"
	"os"
	"syscall"
	"testing"
	"time"
)

// CPU reads this process's own time from /proc: it grows as the process works.
func TestCPUTimeGrows(t *testing.T) {
	before, err := cpuTime(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	x := 0
	for i := range 200_000_000 {
		x += i
	}
	_ = x
	after, err := cpuTime(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if after <= before {
		t.Errorf("CPU time %s then %s after a busy loop; want it to grow", before, after)
	}
}

// The node faults' life cycle: killed, the process is gone; restarted, a new one runs and
// answers the probe Ready was given; stopped, it stays down.
func TestKillRestartStop(t *testing.T) {
	sleep, err := LookPath("sleep", "sleep")
	if err != nil {
		t.Skip(err)
	}
	p, err := Start(Spec{Name: "sleeper", Path: sleep, Args: []string{"60"}, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop(nil, 0)
	probes := 0
	alive := func(context.Context) error {
		probes++
		return syscall.Kill(p.Pid(), 0)
	}
	if err := p.Ready(context.Background(), 5*time.Second, alive); err != nil {
		t.Fatal(err)
	}
	first, exited := p.Pid(), p.Exited()
	p.Kill()
	select {
	case <-exited:
	case <-time.After(5 * time.Second):
		t.Fatal("the process survived Kill")
	}
	before := probes
	if err := p.Restart(context.Background()); err != nil {
		t.Fatal(err)
	}
	if p.Pid() == first || probes == before || syscall.Kill(p.Pid(), 0) != nil {
		t.Fatalf("after Restart: pid %d (was %d), %d probes (%d before): want a new, live, probed process", p.Pid(), first, probes, before)
	}
	second := p.Pid()
	p.Stop(nil, 0)
	if syscall.Kill(second, 0) == nil {
		t.Errorf("process %d survived Stop", second)
	}
	if err := p.Restart(context.Background()); err == nil {
		t.Error("Restart after Stop started the server again")
	}
}
