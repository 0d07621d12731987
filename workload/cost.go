package workload

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"time"

	"github.com/lockbench/lockbench/report"
)

// fillCost divides the window's cost by the acquisitions. The report's block is named for
// Redis, the first backend; any service's requests and server CPU fill it the same way.
func fillCost(r *report.Result, c Cost) {
	r.Redis = report.RedisCost{
		Commands: c.Requests, CPUUS: c.CPUUS, NetInBytes: c.NetInBytes, NetOutBytes: c.NetOutBytes,
		Measured: c.Servers > 0,
	}
	if c.Split && c.Servers > 0 {
		r.Redis.CommandsSplit, r.Redis.DataCommands, r.Redis.ScriptCalls = true, c.DataRequests, c.ScriptCalls
	}
	if c.Elapsed > 0 {
		r.Redis.CPUPercent = float64(c.CPUUS) / float64(c.Elapsed.Microseconds()) * 100
	}
	if n := float64(r.Acquired); n > 0 {
		r.Redis.CommandsPerAcquire = float64(c.Requests) / n
		if r.Redis.CommandsSplit {
			r.Redis.DataCommandsPerAcquire = float64(c.DataRequests) / n
			r.Redis.ScriptCallsPerAcquire = float64(c.ScriptCalls) / n
		}
		r.Redis.CPUUSPerAcquire = float64(c.CPUUS) / n
		r.Redis.BytesPerAcquire = float64(c.NetInBytes+c.NetOutBytes) / n
	}
}

// hostTicks is the machine's CPU time so far, in clock ticks summed over its cores (Linux's
// /proc/stat): busy (steal included), the hypervisor's steal alone, and in all (busy + idle
// + iowait).
type hostTicks struct{ busy, steal, total uint64 }

// clientReading is lockbench's own CPU and the machine's at one moment (startClientCost).
type clientReading struct {
	at         time.Time
	cpu        time.Duration
	host       hostTicks
	ok, hostOK bool
	sched      schedReading // the goroutines' waits for a processor so far
}

func readClient() clientReading {
	r := clientReading{at: time.Now()}
	r.cpu, r.ok = processCPU()
	r.host, r.hostOK = hostCPU()
	r.sched = readSched()
	return r
}

// startClientCost reads lockbench's CPU and the machine's now, and in an open loop starts
// a probe of its start delay (lateProbe); the function it returns reads them again and
// gives the window's ClientCost (its per-acquire figure is filled by fillClientCost, which
// knows the acquisitions).
func startClientCost(open bool) func() report.ClientCost {
	var probe *lateProbe
	if open {
		probe = startLateProbe()
	}
	from := readClient()
	return func() report.ClientCost {
		to := readClient()
		c := report.ClientCost{Cores: runtime.GOMAXPROCS(0)}
		c.SchedP99US, c.SchedMeanUS, _ = schedWait(from.sched, to.sched)
		if probe != nil {
			c.StartDelayP99US, _ = probe.finish()
		}
		if !from.ok || !to.ok {
			return c
		}
		c.Measured = true
		c.CPUUS = uint64(max(to.cpu-from.cpu, 0).Microseconds())
		if el := to.at.Sub(from.at); el > 0 {
			c.CPUPercent = float64(c.CPUUS) / (float64(el.Microseconds()) * float64(c.Cores)) * 100
		}
		if from.hostOK && to.hostOK && to.host.total > from.host.total {
			t := float64(to.host.total - from.host.total)
			c.HostCores = runtime.NumCPU()
			c.HostCPUPercent = float64(to.host.busy-from.host.busy) / t * 100
			c.HostStealPercent = float64(to.host.steal-from.host.steal) / t * 100
		}
		return c
	}
}

// fillClientCost puts the window's ClientCost into r, per acquisition too.
func fillClientCost(r *report.Result, c report.ClientCost) {
	if n := float64(r.Acquired); n > 0 && c.Measured {
		c.CPUUSPerAcquire = float64(c.CPUUS) / n
	}
	r.Client = c
}

// whyNothingAcquired is the note of a phase that acquired nothing: what became of its
// acquires, and how busy its server was meanwhile — saturated (the lock's own traffic, or
// someone else's) or idle while everyone waited.
func (p *phase) whyNothingAcquired(r report.Result, c Cost) string {
	var why string
	switch {
	case r.Timeouts > 0 && r.Errors == 0:
		why = fmt.Sprintf("every acquire timed out (%d timeouts after %s, 0 errors)", r.Timeouts, p.cfg.AcquireTimeout)
	case r.Timeouts+r.Errors > 0:
		why = fmt.Sprintf("every acquire timed out or failed (%d timeouts after %s, %d errors)", r.Timeouts, p.cfg.AcquireTimeout, r.Errors)
	default:
		why = fmt.Sprintf("no acquire timed out, failed or was released in the window (one may wait up to the acquire timeout, %s)", p.cfg.AcquireTimeout)
	}
	if r.Redis.Measured && c.Elapsed > 0 {
		why += fmt.Sprintf("; %s meanwhile: %.1f%% CPU of one core, %s commands/s", p.service.Name(),
			r.Redis.CPUPercent, report.FormatRate(float64(c.Requests)/c.Elapsed.Seconds()))
	}
	return "nothing acquired: " + why
}

// stuckKeys counts the phase's locks still held once every worker released what it held,
// which nothing will ever remove (seed 003's deadlock), within a bounded time. Derived keys
// (fence counters, queues) are not locks and are not counted. A search cut short counts
// what it found.
func (p *phase) stuckKeys() uint64 {
	if !p.info.KeyTTL {
		return 0 // its locks never carry a ttl by design (getset): not stuck, stale by timestamp
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	n, _ := p.scope.StuckLocks(ctx, p.isLockKey)
	return n
}

// isLockKey reports whether k is one of the phase's lock keys: prefix + "{i}" exactly.
func (p *phase) isLockKey(k string) bool {
	rest, ok := strings.CutPrefix(k, p.prefix)
	return ok && len(rest) > 2 && rest[0] == '{' && rest[len(rest)-1] == '}' && !strings.ContainsAny(rest[1:len(rest)-1], "{}:")
}

// cleanup deletes the phase's keys (locks left behind, fence counters, queues), bounded in
// time: a benchmark must not leave garbage in someone's service, nor hang on a dead one.
func (p *phase) cleanup() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = cleanup(ctx, p.scope)
}
