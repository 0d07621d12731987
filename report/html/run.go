package html

import (
	"strconv"
	"strings"

	"github.com/lockbench/lockbench/report"
)

// run writes a Summary: header, results table, the kind's own figures, notes, then one
// section per result.
func (p *page) run(s *report.Summary) {
	names := report.ResultNames(s.Results)
	p.header(s)
	p.resultsTable(s, names)
	switch kindOf(s) {
	case report.KindSweep:
		p.sweep(s)
	case report.KindCapacity:
		p.capacity(s)
	}
	p.notes(s)
	for i := range s.Results {
		p.result(s, i, names[i])
	}
	p.b.WriteString(`<footer>Written by ` + esc(strings.TrimSpace(s.Tool+" "+s.Version)) +
		`. This page fetches nothing: the numbers are in its tables, the charts are inline.</footer>` + "\n")
}

// header describes the run: what was measured where, with which settings and faults.
func (p *page) header(s *report.Summary) {
	p.b.WriteString("<header>\n<h1>lockbench " + esc(kindOf(s)) + ": " + esc(strategyList(s)) + "</h1>\n")
	if s.Target.Note != "" {
		p.para("alert", "NOTE: "+s.Target.Note)
	}
	c := s.Config
	started := ""
	if !s.StartedAt.IsZero() {
		started = s.StartedAt.UTC().Format("2006-01-02 15:04:05 MST")
	}
	target := strings.Join(nonEmpty(s.Target.Mode, s.Target.Topology, strings.Join(s.Target.Addrs, ", ")), " ")
	if s.Target.RedisVersion != "" {
		target += " (Redis " + s.Target.RedisVersion + ")"
	}
	pacing := "closed loop"
	switch {
	case kindOf(s) == report.KindCapacity:
		pacing = "open loop at each step's offered rate"
	case c.Rate > 0:
		pacing = "open loop at " + report.FormatRate(c.Rate) + "/s"
	}
	keys := plural(c.Keys, "key")
	if c.KeyDist != "" {
		keys += " " + c.KeyDist
	}
	hold := c.Hold
	if hold == "" {
		hold = "0s"
	}
	workload := plural(c.Workers, "worker") + ", " + keys + ", hold " + hold
	if c.Reentry > 0 {
		workload += ", reentry " + strconv.Itoa(c.Reentry)
	}
	workload += ", " + seconds(c.DurationS) + " measured"
	if c.WarmupS > 0 {
		workload += " after " + seconds(c.WarmupS) + " warm-up"
	}
	workload += ", " + pacing
	lock := strings.Join(nonEmpty("ttl "+ttl(c.TTLMS), prefixed("watchdog ", report.LockWatchdog(s)), prefixed("wait ", report.LockWait(s)),
		prefixed("acquire timeout ", msIf(c.AcquireTimeoutMS)), prefixed("on lost ", c.OnLost)), ", ")
	sweep := ""
	if s.Sweep != nil {
		sweep = s.Sweep.Param + " over " + strings.Join(s.Sweep.Values, ", ") + " (the settings above are the base the sweep varies)"
	}
	merged := ""
	if s.Merged > 0 {
		merged = plural(s.Merged, "result file") + " of simultaneous processes, merged"
	}
	p.dl("meta", [][2]string{
		{"version", strings.TrimSpace(s.Tool + " " + s.Version)},
		{"started", started},
		{"target", target},
		{"workload", workload},
		{"lock", lock},
		{"faults", strings.Join(c.Faults, "; ")},
		{"profile", c.Profile},
		{"sweep", sweep},
		{"node", s.Node},
		{"merged", merged},
	})
	if s.Interrupted {
		p.para("alert", "Interrupted: the run was stopped before it finished; the numbers cover only what ran.")
	}
	p.b.WriteString("</header>\n")
}

// resultsTable is the strategy table: the figures of every result and its verdict, linked
// to the result's evidence.
func (p *page) resultsTable(s *report.Summary, names []string) {
	p.section("results", "Results", "")
	procs := false
	for _, r := range s.Results {
		procs = procs || r.Fairness.Processes != nil
	}
	header := []string{"strategy"}
	if s.Sweep != nil {
		header = append(header, s.Sweep.Param)
	}
	header = append(header, "acquires/s", "p50", "p99", "p99.9", "max", "handoff p99", "timeouts", "lost", "stuck", "cmd/acq", "CPU/acq", "Jain")
	if procs {
		header = append(header, "proc Jain")
	}
	header = append(header, "verdict")
	var rows [][]cell
	for i := range s.Results {
		r := &s.Results[i]
		a, h := r.LatencyUS.Acquire, r.LatencyUS.Handoff
		row := []cell{{text: names[i], href: "#" + resultID(i)}}
		if s.Sweep != nil {
			row = append(row, cell{text: orDash(r.ParamValue)})
		}
		row = append(row,
			cell{text: report.FormatRate(r.AcquireRate), num: true},
			cell{text: us(a.P50, a.Count > 0), num: true},
			cell{text: us(a.P99, a.Count > 0), num: true},
			cell{text: us(a.P999, a.Count > 0), num: true},
			cell{text: us(a.Max, a.Count > 0), num: true},
			cell{text: us(h.P99, h.Count > 0), num: true},
			cell{text: count(r.Timeouts), num: true},
			cell{text: count(r.Safety.LostLeases), num: true},
			cell{text: count(r.Safety.StuckKeys), num: true, class: alarm(r.Safety.StuckKeys > 0)},
			cell{text: costText(r, func(c report.RedisCost) string { return num1(c.CommandsPerAcquire) }), num: true},
			cell{text: costText(r, func(c report.RedisCost) string { return report.FormatUS(c.CPUUSPerAcquire) }), num: true},
			cell{text: jain(r.Fairness.Jain), num: true},
		)
		if procs {
			t := "-"
			if pf := r.Fairness.Processes; pf != nil {
				t = jain(pf.Jain)
				if pf.Starved > 0 {
					t += ", " + strconv.Itoa(pf.Starved) + "/" + strconv.Itoa(pf.Count) + " starved"
				}
			}
			row = append(row, cell{text: t, num: true})
		}
		row = append(row, cell{text: orDash(r.Verdict), href: "#" + resultID(i) + "-evidence", class: "verdict " + verdictClass(r.Verdict)})
		rows = append(rows, row)
	}
	p.table("results", header, rows)
	p.para("legend", "acquires/s: locks acquired per second; p50..max: acquire latency; handoff: a release to a waiting worker's acquire; "+
		"lost: releases that found their lease gone; stuck: locks left without a ttl; cmd/acq, CPU/acq: lock server requests and CPU time per acquire; "+
		"Jain: fairness across workers (1 = even); - = nothing measured. The verdict links to what the oracle saw.")
	for i := range s.Results {
		r := &s.Results[i]
		p.b.WriteString(`<p class="explain"><a href="#` + resultID(i) + `-evidence"><strong class="verdict ` + verdictClass(r.Verdict) + `">` +
			esc(names[i]+": "+orDash(r.Verdict)) + "</strong></a> — " + esc(explainVerdict(r)) + "</p>\n")
	}
	p.end()
}

// notes are the Summary's notes and recommendations.
func (p *page) notes(s *report.Summary) {
	if len(s.Notes) == 0 && len(s.Recommendations) == 0 {
		return
	}
	p.section("notes", "Notes", "")
	p.list("recommend", s.Recommendations)
	p.list("notes", s.Notes)
	p.end()
}

// resultID is the anchor of result i's section.
func resultID(i int) string { return "r" + strconv.Itoa(i) }

// explainVerdict says in words what the verdict means for r.
func explainVerdict(r *report.Result) string {
	s := r.Safety
	var parts []string
	switch {
	case r.Verdict == "":
		return "the engine gave no verdict."
	case r.Verdict == report.VerdictNoData:
		return "nothing was acquired, so nothing was shown to be safe."
	case report.IsInconclusive(r.Verdict):
		return "the run cannot support a verdict: " + strings.TrimPrefix(r.Verdict, report.VerdictInconclusive+": ") + "."
	case report.IsUnsafe(r.Verdict):
		parts = append(parts, "mutual exclusion failed")
		if s.Overlaps > 0 {
			parts = append(parts, times(s.Overlaps, "a worker entered a key while another holder was still inside (overlaps)"))
		}
		if s.StaleWrites > 0 {
			parts = append(parts, count(s.StaleWrites)+" writes of a superseded holder were accepted by the resource")
		}
		if s.Misdeletes > 0 {
			parts = append(parts, count(s.Misdeletes)+" releases deleted the lock of a later holder (misdeletes)")
		}
		if s.FenceRegressions > 0 {
			parts = append(parts, count(s.FenceRegressions)+" fenced writes were refused from a holder nobody had superseded: the fence went backwards")
		}
		if s.FenceReuses > 0 {
			parts = append(parts, count(s.FenceReuses)+" writes carried a fence another lease had used")
		}
	case strings.HasPrefix(r.Verdict, report.VerdictSafe+" ("):
		parts = append(parts, times(s.Overlaps, "two holders were inside one key at once")+", yet no superseded holder's write got through")
		if s.StaleFences > 0 {
			parts = append(parts, "the resource refused "+count(s.StaleFences)+" writes by their stale fencing tokens")
		}
		if s.Aborted > 0 {
			parts = append(parts, count(s.Aborted)+" holders found their lease gone and abandoned their write")
		}
	case strings.HasPrefix(r.Verdict, report.VerdictSafe):
		parts = append(parts, "the oracle saw no two holders inside one key at once, no release deleting another's lock and no lock left without a ttl, over "+
			count(r.Acquired)+" acquires")
	}
	if s.StuckKeys > 0 {
		parts = append(parts, plural(int(s.StuckKeys), "lock")+" stayed in Redis without a ttl at the phase's end: nobody takes "+
			pick(s.StuckKeys == 1, "that key", "those keys")+" again until someone deletes "+pick(s.StuckKeys == 1, "it", "them")+" (DEADLOCK)")
	}
	if cp := s.CrossProcess; cp != nil && (cp.Overlaps > 0 || cp.Misdeletes > 0) {
		parts = append(parts, count(cp.Overlaps)+" of the overlaps and "+count(cp.Misdeletes)+" of the misdeletes were between processes, seen only in their merged histories")
	}
	if s.LostLeases > 0 && !report.IsUnsafe(r.Verdict) {
		parts = append(parts, count(s.LostLeases)+" releases found their lease already gone")
	}
	if len(r.Events) > 0 {
		parts = append(parts, "faults: "+strings.Join(r.Faults, "; "))
	}
	return strings.Join(parts, "; ") + "."
}

// verdictClass is the verdict's CSS class: bad, warn, ok or none.
func verdictClass(v string) string {
	switch {
	case report.IsUnsafe(v), strings.Contains(v, report.VerdictDeadlock):
		return "bad"
	case strings.HasPrefix(v, report.VerdictSafe+" ("):
		return "warn"
	case strings.HasPrefix(v, report.VerdictSafe):
		return "ok"
	}
	return "none"
}

// costText formats a Redis cost, "-" when the target gave no INFO or nothing was acquired.
func costText(r *report.Result, f func(report.RedisCost) string) string {
	if !r.Redis.Measured || r.Acquired == 0 {
		return "-"
	}
	return f(r.Redis)
}

func jain(v float64) string {
	if v == 0 {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

func num1(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

func alarm(b bool) string { return pick(b, "alarm", "") }

func pick(b bool, yes, no string) string {
	if b {
		return yes
	}
	return no
}

func times(n uint64, what string) string {
	if n == 1 {
		return "once " + what
	}
	return count(n) + " times " + what
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

func orDash(s string) string { return pick(s == "", "-", s) }

func prefixed(prefix, s string) string { return pick(s == "", "", prefix+s) }

func msIf(v int64) string { return pick(v <= 0, "", ms(v)) }

func nonEmpty(parts ...string) []string {
	var out []string
	for _, s := range parts {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}
