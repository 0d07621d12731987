package report

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// What the table and markdown reports share: the run description above the results, the
// results' columns, the legend and the notes below them. Everything here is text for
// humans; the machine formats (json, csv) do not use it.

// headerLine is one line of the run description: a label and its text.
type headerLine struct {
	label, text string
}

// runHeader describes the run: tool and start, target, workload, lock options, faults and
// profile. Lines with nothing to say are left out.
func runHeader(s *Summary) []headerLine {
	all := []headerLine{
		{"NOTE", s.Target.Note},
		{"run", runLine(s)},
		{"target", targetLine(s.Target)},
		{"workload", workloadLine(s.Config, s.Kind, sweptParam(s))},
		{"lock", lockLine(lockConfig(s), sweptParam(s))},
		{"faults", strings.Join(s.Config.Faults, "; ")},
		{"on lost", onLostLine(s.Config.OnLost)},
		{"profile", s.Config.Profile},
		{"sweep", sweepLine(s.Sweep)},
		{"node", s.Node},
		{"merged", mergedLine(s.Merged)},
	}
	lines := all[:0]
	for _, l := range all {
		if l.text != "" {
			lines = append(lines, l)
		}
	}
	return lines
}

// onLostLine describes --on-lost abort, "" for the default.
func onLostLine(v string) string {
	if v == "" {
		return ""
	}
	return v + ": before its last write a holder checks its lease and abandons the write when it may be gone"
}

// runLine is "lockbench VERSION, started RFC3339".
func runLine(s *Summary) string {
	line := strings.TrimSpace(s.Tool + " " + s.Version)
	if !s.StartedAt.IsZero() {
		line += ", started " + s.StartedAt.UTC().Format(time.RFC3339)
	}
	return line
}

// sweepLine is "PARAM over V1, V2, ..." for a sweep, "" otherwise.
func sweepLine(sw *Sweep) string {
	if sw == nil {
		return ""
	}
	return sw.Param + " over " + strings.Join(sw.Values, ", ")
}

// mergedLine says how many result files were merged into this one, "" when none were.
func mergedLine(n int) string {
	if n == 0 {
		return ""
	}
	return plural(n, "result file") + " of simultaneous processes, merged"
}

// maxAddrs is how many addresses the target line lists before "+N more".
const maxAddrs = 3

// targetLine is "MODE TOPOLOGY ADDR... (Redis VERSION)".
func targetLine(t Target) string {
	parts := []string{t.Mode, t.Topology}
	addrs := t.Addrs
	if len(addrs) > maxAddrs {
		addrs = append(addrs[:maxAddrs:maxAddrs], fmt.Sprintf("+%d more", len(t.Addrs)-maxAddrs))
	}
	parts = append(parts, strings.Join(addrs, ", "))
	if t.RedisVersion != "" {
		parts = append(parts, "(Redis "+t.RedisVersion+")")
	}
	return joinNonEmpty(parts, " ")
}

// sweptText stands for a setting's value in the run header when a sweep varies it: the
// value in Config is only the base the sweep started from.
const sweptText = "swept"

// sweptParam is the parameter a sweep varies, "" for other kinds of run.
func sweptParam(s *Summary) string {
	if s.Kind != KindSweep || s.Sweep == nil {
		return ""
	}
	return s.Sweep.Param
}

// workloadLine is workers, keys, hold time, reentry, measured window and pacing. The
// setting named swept (a sweep's parameter) shows as "swept".
func workloadLine(c Config, kind, swept string) string {
	workers := plural(c.Workers, "worker")
	if swept == "workers" {
		workers = "workers " + sweptText
	}
	keys := plural(c.Keys, "key")
	if c.KeyDist != "" {
		keys += " " + c.KeyDist
	}
	if swept == "keys" {
		keys = "keys " + sweptText
	}
	hold := c.Hold
	if hold == "" {
		hold = "0s"
	}
	if swept == "hold" {
		hold = sweptText
	}
	parts := []string{workers, keys, "hold " + hold}
	if c.Reentry > 0 {
		parts = append(parts, "reentry "+strconv.Itoa(c.Reentry))
	}
	window := formatSeconds(c.DurationS) + " measured"
	if c.WarmupS > 0 {
		window += " after " + formatSeconds(c.WarmupS) + " warm-up"
	}
	return strings.Join(append(parts, window, pacingText(c, kind, swept)), ", ")
}

// pacingText is "closed loop" or "open loop at RATE/s[, max N in flight]"; a capacity search
// and a rate sweep are open loop at the rates their results give.
func pacingText(c Config, kind, swept string) string {
	var text string
	switch {
	case kind == KindCapacity:
		text = "open loop at each step's offered rate"
	case swept == "rate":
		text = "open loop at the swept rates"
	case c.Rate <= 0:
		return "closed loop"
	default:
		text = "open loop at " + FormatRate(c.Rate) + "/s"
	}
	if c.MaxInflight > 0 {
		text += ", max " + strconv.Itoa(c.MaxInflight) + " in flight"
	}
	return text
}

// lockConfig is s's Config with the watchdog and wait the header shows (see LockWait and
// LockWatchdog).
func lockConfig(s *Summary) Config {
	c := s.Config
	c.Watchdog, c.Wait = LockWatchdog(s), LockWait(s)
	// Every phase ran with a lease of its own choosing (Redisson's lock() when no --ttl was
	// given: a 30s lease renewed every 10s): the header shows that lease, not the flag's.
	if r := s.Results; len(r) > 0 && r[0].TTLMS != c.TTLMS && !differBy(r, func(x Result) int64 { return x.TTLMS }) {
		c.TTLMS = r[0].TTLMS
		if r[0].WatchdogMS > 0 && c.Watchdog == "off" && !differBy(r, func(x Result) int64 { return x.WatchdogMS }) {
			c.Watchdog = formatMS(r[0].WatchdogMS)
		}
	}
	return c
}

// differBy reports whether value differs between any two results.
func differBy(results []Result, value func(Result) int64) bool {
	return slices.ContainsFunc(results, func(r Result) bool { return value(r) != value(results[0]) })
}

// OwnText stands for a lock setting in the run header when every phase's lock keeps it its
// own way (Result.Own): a library's or a lock service's own waiting or keep-alive.
const OwnText = "own"

// perRowText stands for the wait in the run header when the phases waited differently:
// each row then names its own (see resultLabels).
const perRowText = "per row"

// LockWait is the wait policy the run header names: the one every phase used (OwnText when
// each waits its own way), "per row" when they differ, the configured one without results.
func LockWait(s *Summary) string {
	if len(s.Results) == 0 {
		return s.Config.Wait
	}
	if waitsDiffer(s.Results) {
		return perRowText
	}
	if s.Results[0].Wait == "" {
		return s.Config.Wait // a file written before results named their wait
	}
	return s.Results[0].Wait
}

// LockWatchdog is the watchdog the run header names: the configured one, or OwnText when no
// phase's lock takes lockbench's watchdog.
func LockWatchdog(s *Summary) string {
	if len(s.Results) > 0 && !slices.ContainsFunc(s.Results, func(r Result) bool { return !slices.Contains(r.Own, "watchdog") }) {
		return OwnText
	}
	return s.Config.Watchdog
}

// waitsDiffer reports whether the results used more than one wait policy.
func waitsDiffer(results []Result) bool {
	return slices.ContainsFunc(results, func(r Result) bool { return r.Wait != results[0].Wait })
}

// lockLine is the lock options: ttl, watchdog, wait policy and acquire timeout. The option
// named swept (a sweep's parameter) shows as "swept".
func lockLine(c Config, swept string) string {
	ttl, watchdog, wait := formatTTL(c.TTLMS), c.Watchdog, c.Wait
	switch swept {
	case "ttl":
		ttl = sweptText
	case "watchdog":
		watchdog = sweptText
	case "wait":
		wait = sweptText
	}
	parts := []string{"ttl " + ttl}
	if watchdog != "" {
		parts = append(parts, "watchdog "+watchdog)
	}
	if wait != "" {
		parts = append(parts, "wait "+wait)
	}
	if c.AcquireTimeoutMS > 0 {
		parts = append(parts, "acquire timeout "+formatMS(c.AcquireTimeoutMS))
	}
	return strings.Join(parts, ", ")
}

// column is one column of the results table after the strategy column.
type column struct {
	header string
	cell   func(r *Result) string
	text   bool // left-aligned text rather than a right-aligned number
}

// strategyHeader heads the column that holds resultLabels.
const strategyHeader = "STRATEGY"

// resultColumns are the table's columns after STRATEGY: numbers (right-aligned) and, last,
// the verdict. legendLines explains their headers.
//
// The overlap count has no column: the verdict says it ("UNSAFE: 3 overlaps"), and CSV and
// JSON keep the raw count. Handoff shows its p99 only; its p50 is in CSV and JSON. Both
// keep the table within about 130 columns.
//
// A merged run (results with Fairness.Processes) gets PROC JAIN beside TIMEOUTS, next to
// the latencies: a good p99 of the processes that got the lock must not hide the ones that
// starved.
func resultColumns(results []Result) []column {
	acquire := func(r *Result) Percentiles { return r.LatencyUS.Acquire }
	handoff := func(r *Result) Percentiles { return r.LatencyUS.Handoff }
	cols := []column{
		{header: "ACQ/S", cell: func(r *Result) string { return FormatRate(r.AcquireRate) }},
		{header: "P50", cell: latencyCell(acquire, func(p Percentiles) int64 { return p.P50 })},
		{header: "P99", cell: latencyCell(acquire, func(p Percentiles) int64 { return p.P99 })},
		{header: "P99.9", cell: latencyCell(acquire, func(p Percentiles) int64 { return p.P999 })},
		{header: "MAX", cell: latencyCell(acquire, func(p Percentiles) int64 { return p.Max })},
		{header: "HO P99", cell: latencyCell(handoff, func(p Percentiles) int64 { return p.P99 })},
		{header: "TIMEOUTS", cell: func(r *Result) string { return formatCount(r.Timeouts) }},
	}
	if anyProcesses(results) {
		cols = append(cols, column{header: procJainHeader, cell: procJainCell})
	}
	return append(cols, []column{
		{header: "LOST", cell: func(r *Result) string { return formatCount(r.Safety.LostLeases) }},
		{header: "STUCK", cell: func(r *Result) string { return stuckCell(r.Safety.StuckKeys) }},
		{header: "CMD/ACQ", cell: costCell(func(c RedisCost) string { return formatCommands(c.CommandsPerAcquire) })},
		{header: "CPU/ACQ", cell: costCell(func(c RedisCost) string { return FormatUS(c.CPUUSPerAcquire) })},
		{header: "JAIN", cell: func(r *Result) string { return measuredCell(r.Fairness.Jain, formatJain) }},
		{header: "VERDICT", cell: verdictCell, text: true},
	}...)
}

// procJainHeader heads the column of fairness across processes.
const procJainHeader = "PROC JAIN"

// anyProcesses reports whether a result carries fairness across processes (a merged run).
func anyProcesses(results []Result) bool {
	return slices.ContainsFunc(results, func(r Result) bool { return r.Fairness.Processes != nil })
}

// procJainCell is Jain's index across processes and, marked, how many of them starved:
// "0.98", "0.25, 3/4 starved !"; "-" for a result of one process.
func procJainCell(r *Result) string {
	p := r.Fairness.Processes
	if p == nil {
		return "-"
	}
	cell := measuredCell(p.Jain, formatJain)
	if p.Starved > 0 {
		cell += ", " + strconv.Itoa(p.Starved) + "/" + strconv.Itoa(p.Count) + " starved" + alarmMark
	}
	return cell
}

// legendLines explain the abbreviated column headers, and the abbreviated settings in the
// result labels when there are any; each line fits in 130 columns.
func legendLines(results []Result) []string {
	lines := []string{
		"ACQ/S acquires per second; P50..MAX acquire latency; HO P99 handoff latency (a release to a waiting worker's acquire)",
		"LOST releases that found their lease gone; STUCK locks left without a ttl (! = a deadlock waiting to happen)",
		"CMD/ACQ, CPU/ACQ lock server requests and CPU time per acquire; JAIN fairness across workers (1 = even); - = nothing measured",
		"VERDICT what the safety oracle saw: UNSAFE = two holders inside one key at once, a release that deleted another's lock, or a fence",
		"  that went backwards; fenced = every stale write was refused; DEADLOCK = locks stuck without a ttl; no data = nothing acquired",
	}
	if slices.ContainsFunc(results, func(r Result) bool { return IsInconclusive(r.Verdict) }) {
		lines = append(lines, "  inconclusive = the run cannot support a verdict: the lock server denied a command or did not answer, or under "+
			strconv.Itoa(MinAcquiredToJudge)+" acquires")
	}
	if anyProcesses(results) {
		lines = append(lines, procJainHeader+" fairness across processes (their acquires per worker); N/M starved = N of M processes got nothing while waiting")
	}
	auto := autoLabeled(results)
	for _, v := range resultVariants() {
		if v.legend != "" && varies(results, auto, v.value) {
			lines = append(lines, v.name+"= "+v.legend)
		}
	}
	return lines
}

// alarmMark follows a non-zero count that means the lock failed (stuck keys): it must
// stand out.
const alarmMark = " !"

// stuckCell is the stuck-key count, marked when non-zero.
func stuckCell(n uint64) string {
	if n > 0 {
		return formatCount(n) + alarmMark
	}
	return "0"
}

// verdictCell is the result's verdict, or "-" when the engine gave none.
func verdictCell(r *Result) string {
	if r.Verdict == "" {
		return "-"
	}
	return r.Verdict
}

// latencyCell returns a cell function printing one percentile (µs) of one histogram, or "-"
// when that histogram recorded nothing.
func latencyCell(hist func(*Result) Percentiles, pick func(Percentiles) int64) func(*Result) string {
	return func(r *Result) string {
		p := hist(r)
		if p.Count == 0 {
			return "-"
		}
		return FormatUS(float64(pick(p)))
	}
}

// costCell formats a Redis cost, or "-" when the target gave no INFO or nothing was acquired.
func costCell(format func(RedisCost) string) func(*Result) string {
	return func(r *Result) string {
		if !r.Redis.Measured || r.Acquired == 0 {
			return "-"
		}
		return format(r.Redis)
	}
}

// measuredCell formats v, or "-" when v is 0: a cost or fairness of exactly 0 means the
// phase had nothing to measure it on (no acquires, or no INFO from the target).
func measuredCell(v float64, format func(float64) string) string {
	if v == 0 {
		return "-"
	}
	return format(v)
}

// formatCommands formats commands per acquire with one decimal: 4.0.
func formatCommands(v float64) string { return formatFloat(v, 1) }

// formatJain formats Jain's index with two decimals: 0.98.
func formatJain(v float64) string { return formatFloat(v, 2) }

// grid is a table for humans before rendering: a header, rows of cells, and which columns
// hold text (left-aligned); the others hold numbers (right-aligned).
type grid struct {
	header []string
	rows   [][]string
	text   []bool
}

// resultsGrid is the results table: one row per result, named by resultLabels.
func resultsGrid(results []Result) grid {
	cols := resultColumns(results)
	g := grid{header: []string{strategyHeader}, text: []bool{true}}
	for _, c := range cols {
		g.header = append(g.header, c.header)
		g.text = append(g.text, c.text)
	}
	labels := resultLabels(results)
	for i := range results {
		row := []string{labels[i]}
		for _, c := range cols {
			row = append(row, c.cell(&results[i]))
		}
		g.rows = append(g.rows, row)
	}
	return g
}

// variant is one per-result setting that a sweep may vary.
type variant struct {
	name   string
	legend string // explains name in the legend when it is not self-explanatory
	value  func(r *Result) string
}

// resultVariants are the settings a result label may show, in label order.
func resultVariants() []variant {
	return []variant{
		{"wait", "", func(r *Result) string { return r.Wait }},
		{"ttl", "", func(r *Result) string { return formatTTL(r.TTLMS) }},
		{"wd", "watchdog renewal interval", func(r *Result) string {
			if r.WatchdogMS == 0 {
				return "off"
			}
			return formatMS(r.WatchdogMS)
		}},
		{"workers", "", func(r *Result) string { return strconv.Itoa(r.Workers) }},
		{"keys", "", func(r *Result) string { return strconv.Itoa(r.Keys) }},
	}
}

// ResultNames names each result as the results table does (for legends and listings
// elsewhere): see resultLabels.
func ResultNames(results []Result) []string { return resultLabels(results) }

// resultLabels names each result. A result with a Label is named by it (see labelName).
// The others are named by their strategy followed by name=value for every setting that
// differs between them (an old-style sweep), e.g. "token ttl=5s wd=1.67s"; settings they
// all share are in the run header instead.
func resultLabels(results []Result) []string {
	labels := make([]string, len(results))
	auto := autoLabeled(results)
	for i := range results {
		labels[i] = labelName(&results[i])
	}
	for _, v := range resultVariants() {
		if !varies(results, auto, v.value) {
			continue
		}
		for _, i := range auto {
			labels[i] += " " + v.name + "=" + v.value(&results[i])
		}
	}
	// Phases that waited differently each name their wait, labelled ones too (a profile's
	// phases): the header cannot say it for them, and no scheduler's row may read as the
	// lock's own. A sweep's value already says it.
	if waitsDiffer(results) {
		for i := range results {
			r := &results[i]
			if r.Label != "" && r.ParamValue == "" && !strings.Contains(r.Label, "wait=") {
				labels[i] += " wait=" + r.Wait
			}
		}
	}
	return labels
}

// labelName is r's Label, prefixed by its strategy unless the label already starts with it
// ("token ttl=200ms" stays, "gc-pause" becomes "token gc-pause"); just the strategy when
// r has no Label.
func labelName(r *Result) string {
	switch {
	case r.Label == "":
		return r.Strategy
	case r.Label == r.Strategy, strings.HasPrefix(r.Label, r.Strategy+" "):
		return r.Label
	default:
		return r.Strategy + " " + r.Label
	}
}

// autoLabeled returns the indexes of the results without a Label: those whose label
// resultLabels derives from their settings.
func autoLabeled(results []Result) []int {
	var idx []int
	for i := range results {
		if results[i].Label == "" {
			idx = append(idx, i)
		}
	}
	return idx
}

// varies reports whether value differs between any two of the results at idx.
func varies(results []Result, idx []int, value func(*Result) string) bool {
	for _, i := range idx {
		if value(&results[i]) != value(&results[idx[0]]) {
			return true
		}
	}
	return false
}

// noteLines are what a reader must see below the numbers: per result, a phase error,
// counts that have no column, its faults and what they did; then Summary.Notes, the
// recommendations, and whether the run was interrupted.
func noteLines(s *Summary) []string {
	var lines []string
	labels := resultLabels(s.Results)
	for i := range s.Results {
		lines = append(lines, resultNotes(labels[i], &s.Results[i], s.Config.Faults)...)
	}
	for _, n := range s.Notes {
		lines = append(lines, "note: "+n)
	}
	for _, r := range s.Recommendations {
		lines = append(lines, "recommend: "+r)
	}
	if s.Interrupted {
		lines = append(lines, "interrupted: the run was stopped before it finished; the numbers cover only what ran")
	}
	return lines
}

// resultNotes are one result's notes, each prefixed with its label. Its faults are left out
// when they are the run's (runFaults), which the run header shows once.
func resultNotes(label string, r *Result, runFaults []string) []string {
	var lines []string
	if r.Error != "" {
		lines = append(lines, label+": error: "+r.Error+" (the phase did not finish)")
	}
	if r.Interrupted {
		lines = append(lines, label+": interrupted after "+formatSeconds(r.DurationS)+" of measurement")
	}
	if len(r.Own) > 0 && r.Source != "" {
		// A library or lock service measured as shipped: which one, and its version.
		lines = append(lines, label+": library: "+r.Source)
	}
	for _, n := range r.Notes {
		lines = append(lines, label+": "+n)
	}
	shown := 0
	for _, e := range r.FirstErrors {
		switch {
		case e.Op == OpProbe:
			continue // the cost note says what the read at the window's end met; the verdict, why it matters
		case shown == 0:
			lines = append(lines, label+": first error: "+e.Message)
		default:
			lines = append(lines, label+": first "+e.Kind+" error: "+e.Message)
		}
		shown++
	}
	if counts := countNotes(r); len(counts) > 0 {
		lines = append(lines, label+": "+strings.Join(counts, ", "))
	}
	if n := holdersNote(r); n != "" {
		lines = append(lines, label+": "+n)
	}
	if n := StealNote(r); n != "" {
		lines = append(lines, label+": "+n)
	}
	if len(r.Faults) > 0 && !slices.Equal(r.Faults, runFaults) {
		lines = append(lines, label+": faults: "+strings.Join(r.Faults, "; "))
	}
	if len(r.Events) > 0 {
		lines = append(lines, label+": events: "+eventsText(r.Events))
	}
	return lines
}

// countNotes are the counts of r that have no column, when non-zero. The overlap count is
// here only when the engine gave no verdict (which would say it).
func countNotes(r *Result) []string {
	var counts []string
	if r.Verdict == "" && r.Safety.Overlaps > 0 {
		counts = append(counts, formatCount(r.Safety.Overlaps)+" overlaps (two holders inside one key at once)")
	}
	if r.Errors > 0 {
		counts = append(counts, formatCount(r.Errors)+" lock-server or network errors"+kindsText(r.ErrorsByKind))
	}
	if r.Dropped > 0 {
		counts = append(counts, formatCount(r.Dropped)+" arrivals dropped (no free worker)")
	}
	for _, c := range []struct {
		n    uint64
		what string
	}{
		{r.Safety.UnsafeReentries, "re-entries granted to a holder someone else had superseded"},
		{r.Safety.StaleFences, "stale fencing tokens refused by the resource"},
		{r.Safety.StaleWrites, "writes accepted from a superseded holder"},
		{r.Safety.Misdeletes, "releases that deleted a later holder's lock (misdeletes)"},
		{r.Safety.FenceRegressions, "writes refused from a holder nobody had superseded (the fence went backwards)"},
		{r.Safety.FenceReuses, "writes with a fence another lease had used"},
		{r.Safety.Aborted, "holders abandoned their last write, their lease gone (--on-lost abort)"},
	} {
		if c.n > 0 {
			counts = append(counts, formatCount(c.n)+" "+c.what)
		}
	}
	return counts
}

// kindsText is " (3 denied, 1 timeout)": the non-zero kinds of k; "" without kinds.
func kindsText(k *ErrorKinds) string {
	if k == nil {
		return ""
	}
	var parts []string
	for _, c := range []struct {
		n    uint64
		kind string
	}{{k.Denied, ErrorDenied}, {k.Timeout, ErrorTimeout}, {k.Unreachable, ErrorUnreachable}, {k.Server, ErrorServer}, {k.Other, ErrorOther}} {
		if c.n > 0 {
			parts = append(parts, formatCount(c.n)+" "+c.kind)
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// NoteSteal is the hypervisor's steal, in % of the machine's CPU over a window, from which
// a result says that its figures were measured under it.
const NoteSteal = 5.0

// StealNote says that the hypervisor took a noticeable part of the machine's CPU over r's
// window (steal: this VM's CPUs ready to run while the host ran other guests), and what
// that means for its figures; "" below NoteSteal.
func StealNote(r *Result) string {
	if r.Client.HostStealPercent < NoteSteal {
		return ""
	}
	return fmt.Sprintf("the hypervisor took %.0f%% of this machine's CPU over the window (steal: its CPUs waited while the host ran other guests); Redis and lockbench both lose that time, and the figures move with it from run to run",
		r.Client.HostStealPercent)
}

// holdersNote says, for a lock that is not a mutex, what it admits per key and the most
// holders the oracle saw inside one key at once; "" for a mutex, whose table says it all.
func holdersNote(r *Result) string {
	s := r.Safety
	switch r.Capacity {
	case "semaphore":
		return fmt.Sprintf("holders: at most %d per key at once (%s)", s.MaxHolders, plural(r.Permits, "permit"))
	case "rw":
		return fmt.Sprintf("holders: at most %d per key at once (%s, %s; read ratio %s)", s.MaxHolders,
			plural(int(s.MaxReaders), "reader"), plural(int(s.MaxWriters), "writer"), strconv.FormatFloat(r.ReadRatio, 'g', -1, 64))
	case "set":
		return fmt.Sprintf("holders: at most %d per key at once (%s per acquire)", s.MaxHolders, plural(max(r.LockSet, 1), "key"))
	}
	return ""
}

// maxEventNotes is how many fault events a result's note lists before "+N more".
const maxEventNotes = 3

// eventsText is "N — WHAT at Ts, WHAT at Ts, ... +M more", in the order given (the engine
// records them in time order).
func eventsText(events []Event) string {
	shown := events[:min(len(events), maxEventNotes)]
	parts := make([]string, 0, len(shown)+1)
	for _, e := range shown {
		parts = append(parts, eventText(e))
	}
	if more := len(events) - len(shown); more > 0 {
		parts = append(parts, "+"+strconv.Itoa(more)+" more")
	}
	return strconv.Itoa(len(events)) + " — " + strings.Join(parts, ", ")
}

// eventText is "WHAT at 1.0s" (the fault spec when What is empty), seconds since the
// measured window began; negative times happened during warm-up.
func eventText(e Event) string {
	what := e.What
	if what == "" {
		what = e.Fault
	}
	return what + " at " + strconv.FormatFloat(e.TS, 'f', 1, 64) + "s"
}

// plural is "1 key", "16 keys".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// joinNonEmpty joins the non-empty parts with sep.
func joinNonEmpty(parts []string, sep string) string {
	kept := parts[:0:0]
	for _, p := range parts {
		if p != "" {
			kept = append(kept, p)
		}
	}
	return strings.Join(kept, sep)
}
