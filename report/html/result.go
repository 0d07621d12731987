package html

import (
	"math"
	"slices"
	"strconv"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lockbench/lockbench/report"
)

// result writes one result's section: timeline, latency curves, evidence, fairness, cost.
func (p *page) result(s *report.Summary, i int, name string) {
	r := &s.Results[i]
	id := resultID(i)
	p.section(id, name, "result")
	p.b.WriteString(`<p class="verdictline"><a href="#` + id + `-evidence" class="verdict ` + verdictClass(r.Verdict) + `">` + esc(orDash(r.Verdict)) + "</a> " +
		esc(report.FormatRate(r.AcquireRate)+" acquires/s over "+seconds(r.DurationS)+", "+count(r.Acquired)+" acquires, "+
			plural(r.Workers, "worker")+", "+plural(r.Keys, "key")+", ttl "+ttl(r.TTLMS)+", wait "+orDash(r.Wait)) + "</p>\n")
	if r.Error != "" {
		p.para("alert", "error: "+r.Error+" (the phase did not finish)")
	}
	if r.Interrupted {
		p.para("alert", "interrupted after "+seconds(r.DurationS)+" of measurement")
	}
	notes := r.Notes
	if n := report.StealNote(r); n != "" {
		notes = append(slices.Clip(notes), n)
	}
	p.list("notes", notes)
	group := id + "-time"
	p.timeline(r, group)
	p.latency(r, name)
	p.evidence(r, id, group)
	p.fairness(r)
	p.cost(r)
	p.end()
}

// eventMarks are a result's fault events as vertical marks, numbered as in its events table.
func eventMarks(r *report.Result, id string) []vline {
	marks := make([]vline, 0, len(r.Events))
	for j, e := range r.Events {
		marks = append(marks, vline{x: e.TS, label: strconv.Itoa(j + 1), title: eventText(e), class: "event", href: "#" + id + "-ev" + strconv.Itoa(j+1)})
	}
	return marks
}

// eventText is "WHAT at T (FAULT)".
func eventText(e report.Event) string {
	return e.What + " at " + strconv.FormatFloat(e.TS, 'f', 2, 64) + "s (" + e.Fault + ")"
}

// timeline charts acquires/s and acquire p50/p99 per second, with the fault events.
func (p *page) timeline(r *report.Result, group string) {
	if len(r.Timeline) == 0 {
		return
	}
	id := strings.TrimSuffix(group, "-time")
	rate := series{name: "acquires/s", color: 0}
	p99 := series{name: "acquire p99", color: 1}
	prev := 0.0
	for _, sec := range r.Timeline {
		d := sec.TS - prev
		if d <= 0 {
			d = 1
		}
		v := float64(sec.Acquired) / d
		rate.points = append(rate.points, pt(sec.TS, v, at(sec.TS)+": "+report.FormatRate(v)+" acquires/s"))
		if sec.P99US > 0 {
			p99.points = append(p99.points, pt(sec.TS, float64(sec.P99US), at(sec.TS)+": p99 "+report.FormatUS(float64(sec.P99US))))
		}
		prev = sec.TS
	}
	p50 := p.intervalP50(r)
	xmax := max(r.DurationS, prev)
	events := eventMarks(r, id)
	for _, e := range events {
		xmax = max(xmax, e.x)
	}
	ta := axis{label: "seconds since the measured window began", min: 0, max: xmax, format: func(v float64) string { return num(v) + "s" }}
	p.b.WriteString(`<h3>Over time</h3>` + "\n")
	c := chart{id: p.chartID(), kind: "timeline", title: "Acquires per second", x: ta, y: axis{label: "acquires/s", format: report.FormatRate},
		series: []series{rate}, vlines: events, zoom: group}
	c.svg(&p.b)
	lat := []series{p99}
	if len(p50.points) > 0 {
		lat = []series{p50, p99}
	}
	c = chart{id: p.chartID(), kind: "timeline", title: "Acquire latency per second (log scale)", x: ta,
		y: axis{label: "acquire latency", log: true, format: fmtUS}, series: lat, vlines: events, zoom: group}
	c.svg(&p.b)
	p.eventsTable(r, id)
}

// intervalP50 is acquire p50 per second from the per-second histograms; empty when the
// result carries none.
func (p *page) intervalP50(r *report.Result) series {
	s := series{name: "acquire p50", color: 0, dashed: true}
	if len(r.Intervals) == 0 {
		return s
	}
	start := r.Intervals[0].StartMS
	for _, in := range r.Intervals {
		if in.Acquire == "" {
			continue
		}
		h, err := report.DecodeHistogram(in.Acquire)
		if err != nil {
			continue // the p99 line (from the timeline) still shows the second
		}
		t := float64(in.EndMS-start) / 1e3
		v := float64(h.ValueAtQuantile(50))
		s.points = append(s.points, pt(t, v, at(t)+": p50 "+report.FormatUS(v)))
	}
	return s
}

// eventsTable lists the fault events with anchors the chart marks link to.
func (p *page) eventsTable(r *report.Result, id string) {
	if len(r.Events) == 0 {
		if len(r.Faults) > 0 {
			p.para("", "faults: "+strings.Join(r.Faults, "; ")+" (no event recorded)")
		}
		return
	}
	p.b.WriteString(`<div class="scroll"><table class="events"><thead><tr><th>#</th><th>at</th><th>what</th><th>fault</th></tr></thead><tbody>` + "\n")
	for j, e := range r.Events {
		n := strconv.Itoa(j + 1)
		p.b.WriteString(`<tr id="` + id + "-ev" + n + `"><td>` + n + `</td><td class="num">` + esc(strconv.FormatFloat(e.TS, 'f', 2, 64)+"s") +
			"</td><td>" + esc(e.What) + "</td><td>" + esc(e.Fault) + "</td></tr>\n")
	}
	p.b.WriteString("</tbody></table></div>\n")
}

// percentileTicks label the x axis of the latency curves, where x = 1/(1-p).
var percentileTicks = []tick{{1, "0%"}, {10, "90%"}, {100, "99%"}, {1e3, "99.9%"}, {1e4, "99.99%"}, {1e5, "99.999%"}}

// ticksPerHalfDistance is how many points a percentile curve has per halving of the
// distance to 100%, as HdrHistogram's .hgrm output.
const ticksPerHalfDistance = 5

// latency charts the four latencies against percentile, 0% to 99.999%, log scales, from
// the result's full HDR histograms, with their percentiles in a table.
func (p *page) latency(r *report.Result, name string) {
	hs := []struct {
		name string
		enc  string
		pct  report.Percentiles
	}{
		{"acquire", r.Histograms.Acquire, r.LatencyUS.Acquire},
		{"handoff", r.Histograms.Handoff, r.LatencyUS.Handoff},
		{"hold", r.Histograms.Hold, r.LatencyUS.Hold},
		{"release", r.Histograms.Release, r.LatencyUS.Release},
	}
	var ss []series
	var rows [][]cell
	for i, h := range hs {
		pc := h.pct
		rows = append(rows, []cell{{text: h.name}, {text: count(pc.Count), num: true}, {text: us(pc.P50, pc.Count > 0), num: true},
			{text: us(pc.P90, pc.Count > 0), num: true}, {text: us(pc.P99, pc.Count > 0), num: true},
			{text: us(pc.P999, pc.Count > 0), num: true}, {text: us(pc.Max, pc.Count > 0), num: true}})
		if h.enc == "" {
			continue
		}
		hist, err := report.DecodeHistogram(h.enc)
		if err != nil || hist.TotalCount() == 0 {
			continue // the table row above still has the percentiles
		}
		ss = append(ss, series{name: h.name, color: i, dense: true, points: percentileCurve(hist, h.name)})
	}
	p.b.WriteString("<h3>Latency by percentile</h3>\n")
	if len(ss) > 0 {
		c := chart{id: p.chartID(), kind: "latency", title: name + ": latency by percentile (log scales)",
			x: axis{label: "percentile", log: true, min: 1, max: 1e5, ticks: percentileTicks},
			y: axis{label: "latency", log: true, format: fmtUS}, series: ss}
		c.svg(&p.b)
	}
	p.table("latency", []string{"latency", "count", "p50", "p90", "p99", "p99.9", "max"}, rows)
}

// percentileCurve samples h from 0% to 99.999%: x = 1/(1-p), y = the value there.
func percentileCurve(h *hdrhistogram.Histogram, name string) []point {
	var pts []point
	for i := 0; ; i++ {
		x := math.Pow(2, float64(i)/ticksPerHalfDistance)
		if x > 1e5*1.0001 {
			break
		}
		q := 100 * (1 - 1/x)
		v := float64(h.ValueAtQuantile(q))
		qs := strings.TrimRight(strings.TrimRight(strconv.FormatFloat(q, 'f', 4, 64), "0"), ".")
		pts = append(pts, point{x: x, y: max(v, 1), label: name + " p" + qs + ": " + report.FormatUS(v)})
	}
	return pts
}

// evidence writes what the oracle saw: its counts explained, the cross-process check, the
// per-second overlaps, timeouts and errors on the timeline's axis, and the critical
// sections of a history when the result carries one.
func (p *page) evidence(r *report.Result, id, group string) {
	p.b.WriteString(`<h3 id="` + id + `-evidence">What the oracle saw: <span class="verdict ` + verdictClass(r.Verdict) + `">` + esc(orDash(r.Verdict)) + "</span></h3>\n")
	p.para("", explainVerdict(r))
	s := r.Safety
	counts := []struct {
		n    uint64
		what string
	}{
		{s.Overlaps, "overlaps: a worker entered a key while another holder was inside"},
		{s.StaleWrites, "stale writes: writes the resource accepted from a superseded holder"},
		{s.StaleFences, "stale fences: writes the resource refused by their fencing token"},
		{s.Misdeletes, "misdeletes: releases that deleted a later holder's lock"},
		{s.LostLeases, "lost leases: releases that found their lease gone"},
		{s.StuckKeys, "stuck keys: locks left without a ttl at the phase's end"},
		{s.FenceRegressions, "fence regressions: the fence went backwards"},
		{s.FenceReuses, "reused fences: two leases were handed one token"},
		{s.UnsafeReentries, "unsafe re-entries: granted to a holder someone else had superseded"},
		{s.Aborted, "aborted: holders abandoned their last write, their lease gone"},
	}
	var rows [][]cell
	for _, c := range counts {
		what, why, _ := strings.Cut(c.what, ": ")
		rows = append(rows, []cell{{text: what}, {text: count(c.n), num: true, class: alarm(c.n > 0 && what != "lost leases" && what != "stale fences" && what != "aborted")}, {text: why}})
	}
	p.table("safety", []string{"oracle count", "", "meaning"}, rows)
	if cp := s.CrossProcess; cp != nil {
		p.para("", "Across "+strconv.Itoa(cp.Processes)+pick(cp.Processes == 1, " process", " processes")+": "+count(cp.Sections)+" critical sections checked ("+count(cp.MeasuredSections)+
			" in the measured window), clock uncertainty "+report.FormatUS(float64(cp.UncertaintyUS))+pick(cp.Complete, "", ", incomplete (a process stopped recording)")+
			". Found only in the merged histories: "+count(cp.Overlaps)+" overlaps, "+count(cp.Misdeletes)+" misdeletes, "+count(cp.StaleWrites)+
			" stale writes, "+count(cp.StaleFences)+" stale fences, "+count(cp.FenceRegressions)+" fence regressions, "+count(cp.FenceReuses)+" reused fences.")
	}
	p.badSeconds(r, id, group)
	p.history(r, id, group)
}

// badSeconds charts overlaps, timeouts and errors per second, when any happened.
func (p *page) badSeconds(r *report.Result, id, group string) {
	ov := series{name: "overlaps", color: 1, bars: true}
	to := series{name: "timeouts", color: 4}
	er := series{name: "errors", color: 8}
	var any bool
	for _, sec := range r.Timeline {
		any = any || sec.Overlaps+sec.Timeouts+sec.Errors > 0
		ov.points = append(ov.points, pt(sec.TS, float64(sec.Overlaps), at(sec.TS)+": "+count(sec.Overlaps)+" overlaps"))
		to.points = append(to.points, pt(sec.TS, float64(sec.Timeouts), at(sec.TS)+": "+count(sec.Timeouts)+" timeouts"))
		er.points = append(er.points, pt(sec.TS, float64(sec.Errors), at(sec.TS)+": "+count(sec.Errors)+" errors"))
	}
	if !any {
		return
	}
	xmax := r.DurationS
	events := eventMarks(r, id)
	for _, e := range events {
		xmax = max(xmax, e.x)
	}
	xmax = max(xmax, r.Timeline[len(r.Timeline)-1].TS)
	c := chart{id: p.chartID(), kind: "evidence", title: "Overlaps, timeouts and errors per second",
		x:      axis{label: "seconds since the measured window began", min: 0, max: xmax, format: func(v float64) string { return num(v) + "s" }},
		y:      axis{label: "per second", format: func(v float64) string { return num(v) }},
		series: []series{ov, to, er}, vlines: events, zoom: group}
	c.svg(&p.b)
}

// maxSections bounds the critical sections drawn from a history: the ones involved in a
// breach first, then the others in time order.
const maxSections = 1500

// maxLanes bounds the keys drawn from a history, those with breaches first.
const maxLanes = 12

// history draws a process's critical sections as a timeline per key, breaches marked,
// when the result carries its history (a --node run's result).
func (p *page) history(r *report.Result, id, group string) {
	if r.History == nil || r.History.Data == "" {
		return
	}
	secs, err := report.DecodeSections(r.History.Data)
	if err != nil || len(secs) == 0 {
		p.para("", "history of process "+r.History.Process+": "+pick(err != nil, "unreadable", "empty"))
		return
	}
	const bad = report.FlagOverlap | report.FlagMisdelete | report.FlagExitStale
	breaches := map[int32]int{}
	origin := secs[0].EnterUS
	for _, s := range secs {
		origin = min(origin, s.EnterUS)
		if s.Flags&bad != 0 {
			breaches[s.Key]++
		}
	}
	keys := make([]int32, 0, len(breaches))
	seen := map[int32]bool{}
	for _, s := range secs {
		if !seen[s.Key] {
			seen[s.Key] = true
			keys = append(keys, s.Key)
		}
	}
	slices.SortStableFunc(keys, func(a, b int32) int { return breaches[b] - breaches[a] })
	keys = keys[:min(len(keys), maxLanes)]
	lane := map[int32]int{}
	var ticks []tick
	for i, k := range keys {
		lane[k] = i
		ticks = append(ticks, tick{float64(i), "key " + strconv.Itoa(int(k))})
	}
	var picked []report.Section
	for _, s := range secs {
		if _, ok := lane[s.Key]; ok && s.Flags&bad != 0 && len(picked) < maxSections {
			picked = append(picked, s)
		}
	}
	for _, s := range secs {
		if _, ok := lane[s.Key]; ok && s.Flags&bad == 0 && len(picked) < maxSections {
			picked = append(picked, s)
		}
	}
	ok := series{name: "critical section", color: 0, spans: true}
	breach := series{name: "overlap, misdelete or stale write", color: 1, spans: true}
	xmax := 0.0
	for _, s := range picked {
		t0, t1 := float64(s.EnterUS-origin)/1e6, float64(s.ExitUS-origin)/1e6
		xmax = max(xmax, t1)
		label := "key " + strconv.Itoa(int(s.Key)) + ": inside " + at(t0) + " for " + report.FormatUS(float64(s.ExitUS-s.EnterUS)) + sectionFlags(s.Flags)
		pt := pt(t0, float64(lane[s.Key]), label)
		pt.x2 = t1
		if s.Flags&bad != 0 {
			breach.points = append(breach.points, pt)
		} else {
			ok.points = append(ok.points, pt)
		}
	}
	p.para("", "Critical sections of process "+r.History.Process+" (clock uncertainty "+report.FormatUS(float64(r.History.UncertaintyUS))+"): "+
		strconv.Itoa(len(picked))+" of "+strconv.Itoa(len(secs))+" drawn, on the "+plural(len(keys), "key")+" with the most breaches; "+
		"times from the first section's entry"+pick(r.History.Truncated, "; the process stopped recording early", "")+".")
	c := chart{id: p.chartID(), kind: "evidence", title: "Who held which key, when (zoom in to see single sections)",
		x:      axis{label: "seconds since the first section", min: 0, max: max(xmax, 1e-3), format: func(v float64) string { return num(v) + "s" }},
		y:      axis{label: "key", min: -0.5, max: float64(len(keys)) - 0.5, ticks: ticks},
		series: []series{ok, breach}, zoom: id + "-history"}
	c.svg(&p.b)
}

// sectionFlags describes what a section's process saw in it.
func sectionFlags(f report.SectionFlags) string {
	var what []string
	for _, fl := range []struct {
		f    report.SectionFlags
		text string
	}{
		{report.FlagOverlap, "entered while another holder was inside"},
		{report.FlagMisdelete, "misdelete"},
		{report.FlagExitStale, "its last write was stale"},
		{report.FlagAborted, "aborted its write"},
		{report.FlagUnmeasured, "outside the measured window"},
	} {
		if f&fl.f != 0 {
			what = append(what, fl.text)
		}
	}
	if len(what) == 0 {
		return ""
	}
	return " (" + strings.Join(what, ", ") + ")"
}

// fairness writes how evenly the workers, and the processes of a fleet, got the lock.
func (p *page) fairness(r *report.Result) {
	f := r.Fairness
	p.b.WriteString("<h3>Fairness</h3>\n")
	rows := [][]cell{{{text: "workers"}, {text: strconv.Itoa(f.Workers), num: true}, {text: jain(f.Jain), num: true},
		{text: count(f.MinPerWorker), num: true}, {text: count(f.MaxPerWorker), num: true}, {text: strconv.Itoa(f.Starved), num: true, class: alarm(f.Starved > 0)}}}
	if pf := f.Processes; pf != nil {
		rows = append(rows, []cell{{text: "processes"}, {text: strconv.Itoa(pf.Count), num: true}, {text: jain(pf.Jain), num: true},
			{text: count(pf.MinAcquired), num: true}, {text: count(pf.MaxAcquired), num: true}, {text: strconv.Itoa(pf.Starved), num: true, class: alarm(pf.Starved > 0)}})
	}
	p.table("fairness", []string{"across", "count", "Jain (1 = even)", "fewest acquires", "most acquires", "starved"}, rows)
}

// cost writes what the lock server spent per acquire.
func (p *page) cost(r *report.Result) {
	p.b.WriteString("<h3>Cost per acquire</h3>\n")
	c := r.Redis
	if !c.Measured || r.Acquired == 0 {
		p.para("", "Not measured: the target gave no INFO, or nothing was acquired.")
		return
	}
	p.table("cost", []string{"commands/acquire", "CPU/acquire", "bytes/acquire", "commands", "CPU", "lock server CPU", "renewals"}, [][]cell{{
		{text: num1(c.CommandsPerAcquire), num: true}, {text: report.FormatUS(c.CPUUSPerAcquire), num: true},
		{text: num1(c.BytesPerAcquire), num: true}, {text: count(c.Commands), num: true},
		{text: report.FormatUS(float64(c.CPUUS)), num: true}, {text: num1(c.CPUPercent) + "% of a core", num: true},
		{text: count(r.Renewals), num: true}}})
}

// at is "t=1.00s".
func at(t float64) string { return "t=" + strconv.FormatFloat(t, 'f', 2, 64) + "s" }

// fmtUS labels a latency axis.
func fmtUS(v float64) string { return report.FormatUS(v) }

// pt is a point with its hover text.
func pt(x, y float64, label string) point { return point{x: x, y: y, label: label} }
