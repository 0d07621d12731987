package report

import (
	"cmp"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/lockbench/lockbench/internal/usage"
)

// Merge combines the results of N lockbench processes that ran the same workload at the same
// time against the same Redis (a multi-machine run, --node I/N) into the result of the whole
// run. The inputs are not modified.
//
// Results are matched by (Strategy, Label) and, when one input holds several results with
// both equal, by their order among those. Counts add up; latencies come from the inputs'
// HDR histograms, merged (percentiles are never averaged); the Jain index is recomputed from
// the per-worker sums; Redis cost is the inputs' mean (see mergeRedis). The merged Summary
// has Merged = len(ss), no Node, and is Interrupted when any input was.
//
// Inputs that did not run the same thing are a *MergeError: a different kind of run,
// different sweep, different strategies or settings, a capacity search (its steps ran at
// different times in each process and do not add up), or twice the same node. So are inputs
// that did not run together — against another target, or at another time (see
// checkTogether) — unless opt.Force is set; a forced merge says in its notes what differed.
// A result that recorded latencies but carries no histograms is an error too.
func Merge(ss []*Summary, opt MergeOptions) (*Summary, error) {
	if len(ss) == 0 {
		return nil, &MergeError{Reason: "no results to merge"}
	}
	if err := checkMergeable(ss); err != nil {
		return nil, &MergeError{Reason: err.Error()}
	}
	apart := checkTogether(ss)
	if len(apart) > 0 && !opt.Force {
		return nil, &MergeError{Reason: strings.Join(apart, "; "), Forcible: true}
	}
	out := mergeHeader(ss)
	for _, a := range apart {
		out.Notes = append(out.Notes, "merged by force although "+a)
	}
	keys := make([][]resultKey, len(ss))
	for n, s := range ss {
		keys[n] = resultKeys(s.Results)
	}
	for i := range ss[0].Results {
		group := make([]*Result, len(ss))
		for n, s := range ss {
			group[n] = &s.Results[slices.Index(keys[n], keys[0][i])]
		}
		r, err := mergeResult(group)
		if err != nil {
			return nil, fmt.Errorf("merge: %s: %w", labelName(&ss[0].Results[i]), err)
		}
		out.Results = append(out.Results, r)
	}
	return out, nil
}

// MergeOptions change what Merge accepts.
type MergeOptions struct {
	// Force merges inputs that ran against different targets or at different times, which
	// Merge otherwise refuses; the merged Summary's notes say what differed. Inputs that ran
	// different phases are refused all the same: they have nothing to match.
	Force bool
}

// MergeError is Merge refusing its inputs: they are not the processes of one run. It is the
// user's choice of files that is wrong, a usage error (the CLI exits 2).
type MergeError struct {
	Reason string
	// Forcible is set when MergeOptions.Force would merge these inputs.
	Forcible bool
}

// ExitCode is usage.ExitCode: the caller's input is wrong, as a command line reports it.
func (e *MergeError) ExitCode() int { return usage.ExitCode }

func (e *MergeError) Error() string {
	if e.Forcible {
		return "merge: " + e.Reason + " (--force merges them anyway)"
	}
	return "merge: " + e.Reason
}

// checkTogether says how the inputs may not have run together, one line per problem, none
// when they did. Every input must have run against input 1's target (see targetDiff), and
// their run windows must overlap (see runWindow): processes that met at a barrier waited
// for each other, so their windows share at least the phases they ran together.
func checkTogether(ss []*Summary) []string {
	var problems []string
	for n, s := range ss[1:] {
		if d := targetDiff(&ss[0].Target, &s.Target); d != "" {
			problems = append(problems, fmt.Sprintf("input %d ran against another target than input 1: %s", n+2, d))
		}
	}
	if p := windowGap(ss); p != "" {
		problems = append(problems, p)
	}
	return problems
}

// targetDiff says how target b differs from a, "" when they are the same: the same mode
// and topology, and the same addresses as given, in any order (the order only decides which
// server a fault's node= names). The processes of one run on several machines are started
// with the same --redis; the same server under another name (a hostname for an IP) is
// refused unless forced. Addresses alone can agree on different servers — 127.0.0.1 on two
// machines — so the Redis version must agree too when both inputs have one.
func targetDiff(a, b *Target) string {
	switch {
	case a.Mode != b.Mode:
		return "mode " + b.Mode + ", input 1 " + a.Mode
	case a.Topology != b.Topology:
		return "topology " + b.Topology + ", input 1 " + a.Topology
	case !sameAddrs(a.Addrs, b.Addrs):
		return "addresses " + strings.Join(b.Addrs, ",") + ", input 1 " + strings.Join(a.Addrs, ",")
	case a.RedisVersion != "" && b.RedisVersion != "" && a.RedisVersion != b.RedisVersion:
		return "Redis " + b.RedisVersion + ", input 1 Redis " + a.RedisVersion + " at the same addresses: another server"
	}
	return ""
}

// sameAddrs reports whether a and b hold the same addresses, in any order.
func sameAddrs(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// windowSlack is how much two inputs' run windows may miss each other and still count as
// overlapping: the disagreement of two machines' clocks (StartedAt is each one's own).
const windowSlack = time.Second

// runWindow is when input s ran, as far as its file tells: from StartedAt for at least its
// phases' warm-ups and measured durations. It may have run longer (connecting, waiting for
// the others at a barrier), never shorter. ok is false when s has no start time.
func runWindow(s *Summary) (start, end time.Time, ok bool) {
	if s.StartedAt.IsZero() {
		return start, end, false
	}
	var seconds float64
	for _, r := range s.Results {
		seconds += s.Config.WarmupS + r.DurationS
	}
	return s.StartedAt, s.StartedAt.Add(time.Duration(seconds * float64(time.Second))), true
}

// windowGap says which input did not run while the others did, "" when every input's run
// window overlaps another's and together they form one stretch of time. Inputs without a
// start time are left out.
func windowGap(ss []*Summary) string {
	type window struct {
		input      int
		start, end time.Time
	}
	var ws []window
	for n, s := range ss {
		if start, end, ok := runWindow(s); ok {
			ws = append(ws, window{n + 1, start, end})
		}
	}
	if len(ws) == 0 {
		return ""
	}
	slices.SortStableFunc(ws, func(a, b window) int { return a.start.Compare(b.start) })
	last := ws[0] // of the windows so far, one stretch, the one that ends last
	for _, w := range ws[1:] {
		if gap := w.start.Sub(last.end); gap > windowSlack {
			return fmt.Sprintf("input %d started at %s, %s after input %d's run had ended (started %s, %s of warm-up and measurement): they did not run together",
				w.input, w.start.UTC().Format(time.RFC3339), gap.Round(time.Second), last.input,
				last.start.UTC().Format(time.RFC3339), last.end.Sub(last.start).Round(100*time.Millisecond))
		}
		if w.end.After(last.end) {
			last = w
		}
	}
	return ""
}

// resultKey identifies a result across the processes of one run.
type resultKey struct {
	strategy, label string
	nth             int // among the results with the same strategy and label, from 0
}

func (k resultKey) String() string {
	name := labelName(&Result{Strategy: k.strategy, Label: k.label})
	if k.nth > 0 {
		name += " (#" + strconv.Itoa(k.nth+1) + ")"
	}
	return name
}

// resultKeys returns the key of each result, in order.
func resultKeys(results []Result) []resultKey {
	keys := make([]resultKey, len(results))
	seen := map[[2]string]int{}
	for i, r := range results {
		id := [2]string{r.Strategy, r.Label}
		keys[i] = resultKey{r.Strategy, r.Label, seen[id]}
		seen[id]++
	}
	return keys
}

// checkMergeable reports why ss cannot be merged, or nil.
func checkMergeable(ss []*Summary) error {
	nodes := map[string]int{}
	for n, s := range ss {
		in := "input " + strconv.Itoa(n+1)
		switch {
		case s == nil:
			return fmt.Errorf("%s is empty", in)
		case s.Kind == KindCapacity:
			return fmt.Errorf("%s is a capacity search: merge combines runs and sweeps, whose phases ran at the same time in every process", in)
		case summaryKind(s) != summaryKind(ss[0]):
			return fmt.Errorf("%s is a %s, input 1 a %s", in, summaryKind(s), summaryKind(ss[0]))
		case !sameSweep(s.Sweep, ss[0].Sweep):
			return fmt.Errorf("%s swept %s, input 1 %s", in, sweepLine(s.Sweep), sweepLine(ss[0].Sweep))
		}
		if s.Node != "" {
			if first, dup := nodes[s.Node]; dup {
				return fmt.Errorf("inputs %d and %d are both node %s: the same file twice?", first, n+1, s.Node)
			}
			nodes[s.Node] = n + 1
		}
		if first := slices.IndexFunc(ss[:n], func(o *Summary) bool { return sameProcess(o, s) }); first >= 0 {
			return fmt.Errorf("inputs %d and %d are the same process's result (%s): the same file twice?", first+1, n+1, processName(s))
		}
		if err := sameResults(ss[0].Results, s.Results); err != nil {
			return fmt.Errorf("%s and input 1 ran different phases: %w", in, err)
		}
	}
	return nil
}

// sameProcess reports whether a and b are one process's result, given twice: they started
// at the same instant as the same node (or both as no node), or they are equal in every
// field. Merging them would count every acquire twice.
func sameProcess(a, b *Summary) bool {
	if !a.StartedAt.IsZero() && a.StartedAt.Equal(b.StartedAt) && a.Node == b.Node {
		return true
	}
	return reflect.DeepEqual(a, b)
}

// processName describes the process that wrote s, for an error message.
func processName(s *Summary) string {
	var parts []string
	if s.Node != "" {
		parts = append(parts, "node "+s.Node)
	}
	if s.Merged > 0 {
		parts = append(parts, "a merge of "+plural(s.Merged, "file"))
	}
	if !s.StartedAt.IsZero() {
		parts = append(parts, "started "+s.StartedAt.UTC().Format(time.RFC3339Nano))
	}
	if len(parts) == 0 {
		return "identical content"
	}
	return strings.Join(parts, ", ")
}

// summaryKind is s.Kind, "run" when empty.
func summaryKind(s *Summary) string {
	if s.Kind == "" {
		return KindRun
	}
	return s.Kind
}

// sameSweep reports whether a and b describe the same sweep (or both none).
func sameSweep(a, b *Sweep) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Param == b.Param && slices.Equal(a.Values, b.Values)
}

// sameResults reports how the phases of b differ from those of a: a result missing on one
// side, or a matched result with other lock settings.
func sameResults(a, b []Result) error {
	ka, kb := resultKeys(a), resultKeys(b)
	var problems []string
	for i, k := range ka {
		j := slices.Index(kb, k)
		if j < 0 {
			problems = append(problems, "only input 1 has "+k.String())
			continue
		}
		if d := settingsDiff(&a[i], &b[j]); d != "" {
			problems = append(problems, k.String()+": "+d)
		}
	}
	for _, k := range kb {
		if !slices.Contains(ka, k) {
			problems = append(problems, "input 1 lacks "+k.String())
		}
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	return nil
}

// settingsDiff names the first lock setting that differs between a and b, "" when none does.
func settingsDiff(a, b *Result) string {
	switch {
	case a.Wait != b.Wait:
		return "wait " + a.Wait + " vs " + b.Wait
	case a.TTLMS != b.TTLMS:
		return "ttl " + formatMS(a.TTLMS) + " vs " + formatMS(b.TTLMS)
	case a.WatchdogMS != b.WatchdogMS:
		return "watchdog " + formatMS(a.WatchdogMS) + " vs " + formatMS(b.WatchdogMS)
	case a.Keys != b.Keys:
		return "keys " + strconv.Itoa(a.Keys) + " vs " + strconv.Itoa(b.Keys)
	case a.ParamValue != b.ParamValue:
		return "value " + a.ParamValue + " vs " + b.ParamValue
	}
	return ""
}

// mergeHeader is everything of the merged Summary but its results: the first input's
// description, the earliest start, the whole run's workers and rate, and the union of the
// inputs' notes.
func mergeHeader(ss []*Summary) *Summary {
	first := ss[0]
	out := &Summary{
		Tool: first.Tool, Kind: first.Kind, Version: first.Version, StartedAt: first.StartedAt,
		Target: first.Target, Config: first.Config, Merged: len(ss), Sweep: first.Sweep,
		Results: []Result{},
	}
	// Copies, so that the merged Summary shares no list with an input.
	out.Target.Addrs = slices.Clone(first.Target.Addrs)
	out.Config.Strategies = slices.Clone(first.Config.Strategies)
	out.Config.Faults = slices.Clone(first.Config.Faults)
	if first.Sweep != nil {
		sw := *first.Sweep
		sw.Values = slices.Clone(sw.Values)
		out.Sweep = &sw
	}
	out.Config.Workers, out.Config.Rate, out.Config.MaxInflight = 0, 0, 0
	var versions []string
	for _, s := range ss {
		out.Interrupted = out.Interrupted || s.Interrupted
		if !s.StartedAt.IsZero() && (out.StartedAt.IsZero() || s.StartedAt.Before(out.StartedAt)) {
			out.StartedAt = s.StartedAt
		}
		// Each process ran its own workers at its own offered rate: the run's are the sums.
		out.Config.Workers += s.Config.Workers
		out.Config.Rate += s.Config.Rate
		out.Config.MaxInflight += s.Config.MaxInflight
		out.Notes = appendNew(out.Notes, s.Notes...)
		versions = appendNew(versions, s.Version)
	}
	if len(versions) > 1 {
		out.Notes = append(out.Notes, "merged results of different lockbench versions: "+strings.Join(versions, ", "))
	}
	out.Recommendations = mergeRecommendations(ss, &out.Notes)
	return out
}

// mergeRecommendations keeps the inputs' recommendations when they all agree. They were
// drawn from one process's share of the load; when they differ, none is kept and a note
// says so.
func mergeRecommendations(ss []*Summary, notes *[]string) []string {
	for _, s := range ss[1:] {
		if !slices.Equal(s.Recommendations, ss[0].Recommendations) {
			*notes = append(*notes, "the merged processes recommended different things; none is repeated here")
			return nil
		}
	}
	return slices.Clone(ss[0].Recommendations)
}

// appendNew appends the values of add that list does not hold yet.
func appendNew(list []string, add ...string) []string {
	for _, v := range add {
		if !slices.Contains(list, v) {
			list = append(list, v)
		}
	}
	return list
}

// mergeResult merges one phase as every process measured it.
func mergeResult(group []*Result) (Result, error) {
	first := group[0]
	out := Result{
		Strategy: first.Strategy, Label: first.Label, ParamValue: first.ParamValue,
		Wait: first.Wait, TTLMS: first.TTLMS, WatchdogMS: first.WatchdogMS, Keys: first.Keys,
		Capacity: first.Capacity, Permits: first.Permits, ReadRatio: first.ReadRatio, LockSet: first.LockSet,
		Own: first.Own, Source: first.Source,
	}
	for n, r := range group {
		out.DurationS = max(out.DurationS, r.DurationS)
		out.Workers += r.Workers
		out.Acquired += r.Acquired
		out.OfferedRate += r.OfferedRate
		out.Timeouts += r.Timeouts
		out.Errors += r.Errors
		out.ErrorsByKind = mergeErrorKinds(out.ErrorsByKind, r.ErrorsByKind)
		out.FirstErrors = mergeFirstErrors(out.FirstErrors, r.FirstErrors)
		out.Dropped += r.Dropped
		out.Safety.Overlaps += r.Safety.Overlaps
		out.Safety.StaleFences += r.Safety.StaleFences
		out.Safety.LostLeases += r.Safety.LostLeases
		out.Safety.UnsafeReentries += r.Safety.UnsafeReentries
		out.Safety.StaleWrites += r.Safety.StaleWrites
		out.Safety.FenceRegressions += r.Safety.FenceRegressions
		out.Safety.FenceReuses += r.Safety.FenceReuses
		out.Safety.Misdeletes += r.Safety.Misdeletes
		out.Safety.Aborted += r.Safety.Aborted
		out.Safety.Fencing = out.Safety.Fencing || r.Safety.Fencing
		// Each process checks for stuck keys at its phase's end; the sum assumes it counts
		// the locks it left itself.
		out.Safety.StuckKeys += r.Safety.StuckKeys
		out.Safety.CrashedHolders += r.Safety.CrashedHolders
		out.Safety.BlockedAfterCrash = mergeCrashBlocked(out.Safety.BlockedAfterCrash, r.Safety.BlockedAfterCrash)
		// Each process counts the permits missing where its own holders died, at most one
		// per death of its own.
		out.Safety.LeakedPermits += r.Safety.LeakedPermits
		out.Safety.MaxHolders = max(out.Safety.MaxHolders, r.Safety.MaxHolders)
		out.Safety.MaxReaders = max(out.Safety.MaxReaders, r.Safety.MaxReaders)
		out.Safety.MaxWriters = max(out.Safety.MaxWriters, r.Safety.MaxWriters)
		out.Renewals += r.Renewals
		out.Faults = appendNew(out.Faults, r.Faults...)
		out.Notes = appendNew(out.Notes, r.Notes...)
		out.Interrupted = out.Interrupted || r.Interrupted
		if r.Error != "" {
			out.Error = joinNonEmpty([]string{out.Error, "input " + strconv.Itoa(n+1) + ": " + r.Error}, "; ")
		}
	}
	if out.DurationS > 0 {
		out.AcquireRate = float64(out.Acquired) / out.DurationS
	}
	if err := mergeLatencies(&out, group); err != nil {
		return out, err
	}
	if err := mergeHoldErrors(&out, group); err != nil {
		return out, err
	}
	fairness, err := mergeFairness(group)
	if err != nil {
		return out, err
	}
	out.Fairness = fairness
	out.Fairness.Processes = mergeProcesses(group, out.Acquired)
	if n := starvedNote(out.Fairness.Processes, group); n != "" {
		out.Notes = append(out.Notes, n)
	}
	out.Redis = mergeRedis(group, out.Acquired)
	out.Client = mergeClient(group, out.Acquired, out.DurationS)
	if err := checkAcross(&out, group); err != nil {
		return out, err
	}
	out.Verdict = ""
	if judged(group) {
		out.Verdict = Verdict(&out)
	}
	out.Events = mergeEvents(group)
	intervals, err := mergeIntervals(group)
	if err != nil {
		return out, err
	}
	out.Intervals = intervals
	out.Timeline = mergeTimeline(group, intervals)
	return out, nil
}

// histogramField picks one of a result's encoded histograms and its percentiles.
type histogramField struct {
	name        string
	encoded     func(*Result) *string
	percentiles func(*Result) *Percentiles
}

// histogramKinds are the four histograms of a result.
func histogramKinds() []histogramField {
	return []histogramField{
		{"acquire", func(r *Result) *string { return &r.Histograms.Acquire }, func(r *Result) *Percentiles { return &r.LatencyUS.Acquire }},
		{"release", func(r *Result) *string { return &r.Histograms.Release }, func(r *Result) *Percentiles { return &r.LatencyUS.Release }},
		{"handoff", func(r *Result) *string { return &r.Histograms.Handoff }, func(r *Result) *Percentiles { return &r.LatencyUS.Handoff }},
		{"hold", func(r *Result) *string { return &r.Histograms.Hold }, func(r *Result) *Percentiles { return &r.LatencyUS.Hold }},
	}
}

// mergeLatencies decodes each histogram of every input, merges them, and sets out's
// histograms (re-encoded) and percentiles (recomputed from the merged histogram).
func mergeLatencies(out *Result, group []*Result) error {
	for _, k := range histogramKinds() {
		merged := NewHistogram()
		for n, r := range group {
			h, err := inputHistogram(r, k)
			if err != nil {
				return fmt.Errorf("input %d: %w", n+1, err)
			}
			if dropped := merged.Merge(h); dropped > 0 {
				return fmt.Errorf("input %d: %s histogram: %d values out of range", n+1, k.name, dropped)
			}
		}
		enc, err := EncodeHistogram(merged)
		if err != nil {
			return fmt.Errorf("%s histogram: %w", k.name, err)
		}
		*k.encoded(out) = enc
		*k.percentiles(out) = PercentilesOf(merged)
	}
	return nil
}

// mergeHoldErrors merges the processes' hold errors (hold_error_us). Where every input that
// measured holds carries their histogram, the merge is exact, as the latencies'. An input
// without it (written before the histogram travelled) leaves only its percentiles: then
// the count and the mean are exact (the mean weighted by the counts), and each percentile
// is the highest of the processes' — an upper bound of the true one, never an average —
// and a note says so.
func mergeHoldErrors(out *Result, group []*Result) error {
	merged := NewHistogram()
	var bound Percentiles
	var sum float64
	exact, measured := true, false
	for n, r := range group {
		p := r.HoldErrorUS
		if p == nil || p.Count == 0 {
			continue
		}
		measured = true
		bound.Count += p.Count
		sum += p.Mean * float64(p.Count)
		bound.P50, bound.P90, bound.P99 = max(bound.P50, p.P50), max(bound.P90, p.P90), max(bound.P99, p.P99)
		bound.P999, bound.Max = max(bound.P999, p.P999), max(bound.Max, p.Max)
		if r.Histograms.HoldError == "" {
			exact = false
			continue
		}
		h, err := DecodeHistogram(r.Histograms.HoldError)
		if err != nil {
			return fmt.Errorf("input %d: hold error %w", n+1, err)
		}
		if dropped := merged.Merge(h); dropped > 0 {
			return fmt.Errorf("input %d: hold error histogram: %d values out of range", n+1, dropped)
		}
	}
	if !measured {
		return nil
	}
	if !exact {
		bound.Mean = sum / float64(bound.Count)
		out.HoldErrorUS = &bound
		out.Notes = append(out.Notes, "hold error merged from the processes' percentiles (an input carries no histogram of it, written by an older lockbench?): "+
			"each percentile is the highest of the processes', an upper bound; the count and the mean are exact")
		return nil
	}
	p := PercentilesOf(merged)
	out.HoldErrorUS = &p
	enc, err := EncodeHistogram(merged)
	if err != nil {
		return fmt.Errorf("hold error histogram: %w", err)
	}
	out.Histograms.HoldError = enc
	return nil
}

// inputHistogram decodes one histogram of r. A histogram that recorded values but was not
// carried along cannot be merged exactly: that is an error, not a guess.
func inputHistogram(r *Result, k histogramField) (*hdrhistogram.Histogram, error) {
	enc := *k.encoded(r)
	if enc == "" && k.percentiles(r).Count > 0 {
		return nil, fmt.Errorf("%s latencies recorded (%d) but no histogram to merge (written by an older lockbench?)",
			k.name, k.percentiles(r).Count)
	}
	h, err := DecodeHistogram(enc)
	if err != nil {
		return nil, fmt.Errorf("%s %w", k.name, err)
	}
	return h, nil
}

// mergeFairness is Jain's index over the workers of every process, exact from the per-worker
// sums: Jain = Sum² / (Workers · SumSquares).
func mergeFairness(group []*Result) (Fairness, error) {
	var f Fairness
	for n, r := range group {
		in := r.Fairness
		if in.Workers == 0 {
			if in.Jain != 0 {
				return f, fmt.Errorf("input %d: fairness has no per-worker sums (written by an older lockbench?)", n+1)
			}
			continue
		}
		if f.Workers == 0 || in.MinPerWorker < f.MinPerWorker {
			f.MinPerWorker = in.MinPerWorker
		}
		f.MaxPerWorker = max(f.MaxPerWorker, in.MaxPerWorker)
		f.Starved += in.Starved
		f.Workers += in.Workers
		f.Sum += in.Sum
		f.SumSquares += in.SumSquares
	}
	if f.SumSquares > 0 {
		f.Jain = f.Sum * f.Sum / (float64(f.Workers) * f.SumSquares)
	}
	return f, nil
}

// mergeProcesses is fairness across the processes of group, nil for fewer than two: each
// input is one process, or (a merged result) the processes it merged. acquired is the
// phase's total, which tells a starved process from a phase in which nobody acquired.
func mergeProcesses(group []*Result, acquired uint64) *ProcessFairness {
	var p ProcessFairness
	add := func(count, starved int, lo, hi uint64, sum, sumSquares float64) {
		if p.Count == 0 || lo < p.MinAcquired {
			p.MinAcquired = lo
		}
		p.MaxAcquired = max(p.MaxAcquired, hi)
		p.Count += count
		p.Starved += starved
		p.Sum += sum
		p.SumSquares += sumSquares
	}
	for _, r := range group {
		if in := r.Fairness.Processes; in != nil {
			add(in.Count, in.Starved, in.MinAcquired, in.MaxAcquired, in.Sum, in.SumSquares)
			continue
		}
		if r.Workers == 0 {
			continue
		}
		share := float64(r.Acquired) / float64(r.Workers)
		starved := 0
		if isStarved(r, acquired) {
			starved = 1
		}
		add(1, starved, r.Acquired, r.Acquired, share, share*share)
	}
	if p.Count < 2 {
		return nil
	}
	if p.SumSquares > 0 {
		p.Jain = p.Sum * p.Sum / (float64(p.Count) * p.SumSquares)
	}
	return &p
}

// isStarved applies ProcessFairness.Starved's rule to one process's result; acquired is the
// phase's total over every process.
func isStarved(r *Result, acquired uint64) bool {
	waited := r.Timeouts > 0 || r.Errors == 0
	return r.Workers > 0 && r.Acquired == 0 && acquired > 0 && waited && r.Error == ""
}

// maxListedProcesses is how many processes' acquire counts a starvation note lists.
const maxListedProcesses = 8

// starvedNote says that processes starved, "" when none did. A good p99 then describes only
// the processes that got the lock: the others' waits are timeouts, or never ended.
func starvedNote(p *ProcessFairness, group []*Result) string {
	if p == nil || p.Starved == 0 {
		return ""
	}
	note := fmt.Sprintf("%d of %d processes starved: no acquire in the measured window while their workers waited", p.Starved, p.Count)
	if len(group) == p.Count && len(group) <= maxListedProcesses {
		counts := make([]string, len(group))
		for i, r := range group {
			counts[i] = formatCount(r.Acquired)
		}
		note += " (acquires per process: " + strings.Join(counts, ", ") + ")"
	}
	return note + "; the latencies count only the acquires made: a starved worker's wait timed out or never ended"
}

// mergeRedis is the phase's Redis cost. Every process sampled INFO on the same servers over
// the same window, so each one's deltas already hold every process's commands, CPU and
// bytes: summing them would count the load N times. The mean of the processes' deltas is
// the best estimate of the one true delta (their windows differ by start-up skew only);
// per-acquire costs divide it by the acquisitions of all processes together.
func mergeRedis(group []*Result, acquired uint64) RedisCost {
	var c RedisCost
	var commands, cpuUS, netIn, netOut, cpuPercent, data, scripts float64
	var measured, split int
	for _, r := range group {
		if !r.Redis.Measured {
			continue
		}
		measured++
		if r.Redis.CommandsSplit {
			split++
			data += float64(r.Redis.DataCommands)
			scripts += float64(r.Redis.ScriptCalls)
		}
		commands += float64(r.Redis.Commands)
		cpuUS += float64(r.Redis.CPUUS)
		netIn += float64(r.Redis.NetInBytes)
		netOut += float64(r.Redis.NetOutBytes)
		cpuPercent += r.Redis.CPUPercent
	}
	if measured == 0 {
		return c
	}
	m := float64(measured)
	c = RedisCost{
		Measured: true,
		Commands: roundU(commands / m), CPUUS: roundU(cpuUS / m),
		NetInBytes: roundU(netIn / m), NetOutBytes: roundU(netOut / m),
		CPUPercent: cpuPercent / m,
	}
	if split == measured { // every process's split, or none
		c.CommandsSplit, c.DataCommands, c.ScriptCalls = true, roundU(data/m), roundU(scripts/m)
	}
	if acquired > 0 {
		n := float64(acquired)
		c.CommandsPerAcquire = float64(c.Commands) / n
		if c.CommandsSplit {
			c.DataCommandsPerAcquire = float64(c.DataCommands) / n
			c.ScriptCallsPerAcquire = float64(c.ScriptCalls) / n
		}
		c.CPUUSPerAcquire = float64(c.CPUUS) / n
		c.BytesPerAcquire = float64(c.NetInBytes+c.NetOutBytes) / n
	}
	return c
}

// mergeClient is the processes' own cost together: their CPU and cores summed (each
// process is a share of the load, and --procs gives each its share of the cores), the
// machines' busy share averaged, the scheduling latency the worst process's.
func mergeClient(group []*Result, acquired uint64, durationS float64) ClientCost {
	var c ClientCost
	var host, steal float64
	var hosts int
	for _, r := range group {
		if !r.Client.Measured {
			continue
		}
		c.Measured = true
		c.CPUUS += r.Client.CPUUS
		c.Cores += r.Client.Cores
		if r.Client.HostCores > 0 {
			host += r.Client.HostCPUPercent
			steal += r.Client.HostStealPercent
			hosts++
			c.HostCores = max(c.HostCores, r.Client.HostCores)
		}
		// Each process queues on its own scheduler: the fleet's is its worst process's.
		c.SchedP99US = max(c.SchedP99US, r.Client.SchedP99US)
		c.SchedMeanUS = max(c.SchedMeanUS, r.Client.SchedMeanUS)
		c.StartDelayP99US = max(c.StartDelayP99US, r.Client.StartDelayP99US)
	}
	if !c.Measured {
		return c
	}
	if hosts > 0 {
		c.HostCPUPercent = host / float64(hosts)
		c.HostStealPercent = steal / float64(hosts)
	}
	if durationS > 0 && c.Cores > 0 {
		c.CPUPercent = float64(c.CPUUS) / (durationS * 1e6 * float64(c.Cores)) * 100
	}
	if acquired > 0 {
		c.CPUUSPerAcquire = float64(c.CPUUS) / float64(acquired)
	}
	return c
}

// roundU rounds a non-negative v to the nearest integer.
func roundU(v float64) uint64 { return uint64(v + 0.5) }

// judged reports whether any input has a verdict: results of a tool version without an
// oracle have none, and their merge gets none either.
func judged(group []*Result) bool {
	return slices.ContainsFunc(group, func(r *Result) bool { return r.Verdict != "" })
}

// checkAcross checks the inputs' histories against each other (CheckAcross) and adds what
// it finds to out's safety. Inputs without a history (a single-process run, an older
// version) leave the check out, and a note says so: their verdict covers each process alone.
func checkAcross(out *Result, group []*Result) error {
	hs := make([]*History, 0, len(group))
	for n, r := range group {
		if r.History == nil {
			out.Notes = append(out.Notes, fmt.Sprintf("overlaps between processes not checked: input %d carries no history (run each process with --node I/N)", n+1))
			return nil
		}
		hs = append(hs, r.History)
	}
	c, err := CheckAcrossCapacity(hs, KeyCapacity{Kind: out.Capacity, Permits: out.Permits})
	if err != nil {
		return err
	}
	c.add(&out.Safety)
	out.Safety.CrossProcess = &c
	out.Notes = append(out.Notes, fmt.Sprintf("between processes: %s; %s overlaps, %s misdeletes (clocks within ±%s: shorter overlaps are not counted)",
		sectionsText(c, out.Acquired), formatCount(c.Overlaps), formatCount(c.Misdeletes), FormatUS(float64(c.UncertaintyUS))))
	return nil
}

// sectionsText says how many critical sections the cross-process check covered, and why
// they are not one per acquire when they are not.
func sectionsText(c CrossCheck, acquired uint64) string {
	text := formatCount(c.MeasuredSections) + " critical sections checked"
	if c.MeasuredSections == 1 {
		text = "1 critical section checked"
	}
	switch {
	case c.MeasuredSections == acquired:
		text += ", one per acquire"
	case !c.Complete:
		text += " against " + formatCount(acquired) + " acquires: a process stopped recording early, so the check covers only part of the window"
	case c.MeasuredSections > acquired && c.Sections == c.MeasuredSections:
		// Histories of a lockbench that recorded every cycle of the phase, unmarked.
		text += " against " + formatCount(acquired) + " acquires: the histories also hold the warm-up's cycles and those that ended " +
			"after the window closed, unmarked, and overlaps among them count too"
	default:
		text += " against " + formatCount(acquired) + " acquires: the histories and the processes' counts disagree"
	}
	if other := c.Sections - c.MeasuredSections; other > 0 {
		text += ", beside " + formatCount(other) + " of the warm-up and the window's end (not counted)"
	}
	return text
}

// mergeEvents is every input's fault events, once each, in time order.
func mergeEvents(group []*Result) []Event {
	var events []Event
	for _, r := range group {
		for _, e := range r.Events {
			if !slices.Contains(events, e) {
				events = append(events, e)
			}
		}
	}
	slices.SortStableFunc(events, func(a, b Event) int { return cmp.Compare(a.TS, b.TS) })
	return events
}

// mergeIntervals merges the inputs' per-second histograms second by second, by index as
// mergeTimeline does: every process samples once a second from the start of the same
// window, which the barrier lined up. A merged second runs from the earliest start to the
// latest end of the processes' seconds (their clocks differ by the skew between machines).
// Inputs without intervals (an older lockbench) add nothing.
func mergeIntervals(group []*Result) ([]Interval, error) {
	var out []Interval
	var merged [][4]*hdrhistogram.Histogram
	for n, r := range group {
		for i, iv := range r.Intervals {
			if i == len(out) {
				out = append(out, Interval{StartMS: iv.StartMS, EndMS: iv.EndMS})
				merged = append(merged, [4]*hdrhistogram.Histogram{NewHistogram(), NewHistogram(), NewHistogram(), NewHistogram()})
			}
			out[i].StartMS = min(out[i].StartMS, iv.StartMS)
			out[i].EndMS = max(out[i].EndMS, iv.EndMS)
			for t, enc := range iv.tagged() {
				h, err := DecodeHistogram(enc)
				if err != nil {
					return nil, fmt.Errorf("input %d: interval %d: %s %w", n+1, i, HLOGTags[t], err)
				}
				merged[i][t].Merge(h)
			}
		}
	}
	for i := range out {
		for t, enc := range out[i].taggedPtr() {
			var err error
			if *enc, err = EncodeHistogram(merged[i][t]); err != nil {
				return nil, fmt.Errorf("interval %d: %s %w", i, HLOGTags[t], err)
			}
		}
	}
	return out, nil
}

// mergeTimeline adds the inputs' timelines second by second (by index: every process
// samples once a second from the start of the same window). A second's p99 comes from the
// merged per-second acquire histogram (intervals) when every input carried its intervals;
// otherwise (an older lockbench) it is the highest of the processes' p99s: an upper bound
// of the true one, never an average.
func mergeTimeline(group []*Result, intervals []Interval) []Second {
	var out []Second
	for _, r := range group {
		for i, sec := range r.Timeline {
			if i == len(out) {
				out = append(out, Second{})
			}
			o := &out[i]
			o.TS = max(o.TS, sec.TS)
			o.Acquired += sec.Acquired
			o.P99US = max(o.P99US, sec.P99US)
			o.Overlaps += sec.Overlaps
			o.Timeouts += sec.Timeouts
			o.Errors += sec.Errors
			o.Events = appendNew(o.Events, sec.Events...)
		}
	}
	exact := !slices.ContainsFunc(group, func(r *Result) bool { return len(r.Intervals) != len(r.Timeline) })
	for i := range out {
		if !exact || i >= len(intervals) {
			break
		}
		if h, err := DecodeHistogram(intervals[i].Acquire); err == nil {
			out[i].P99US = h.ValueAtQuantile(99)
		}
	}
	return out
}

// mergeCrashBlocked adds one process's crash blocks to the merge so far. The counts add
// up and the maxima are exact; the p50 is not (each process kept its own), so the merged
// one is the largest of the processes': no key waited longer than that in half of them.
func mergeCrashBlocked(into, add *CrashBlocked) *CrashBlocked {
	if add == nil {
		return into
	}
	if into == nil {
		c := *add
		return &c
	}
	into.Recovered += add.Recovered
	into.P50 = max(into.P50, add.P50)
	into.Max = max(into.Max, add.Max)
	into.Stuck += add.Stuck
	into.StuckFor = max(into.StuckFor, add.StuckFor)
	return into
}

// mergeErrorKinds adds b's error counts to a's; nil when neither has any.
func mergeErrorKinds(a, b *ErrorKinds) *ErrorKinds {
	if b == nil {
		return a
	}
	sum := ErrorKinds{}
	if a != nil {
		sum = *a
	}
	sum.Denied += b.Denied
	sum.Timeout += b.Timeout
	sum.Unreachable += b.Unreachable
	sum.Server += b.Server
	sum.Other += b.Other
	return &sum
}

// mergeFirstErrors keeps the first error of each kind and operation, a's before b's.
func mergeFirstErrors(a, b []PhaseError) []PhaseError {
	for _, e := range b {
		if !slices.ContainsFunc(a, func(x PhaseError) bool { return x.Kind == e.Kind && x.Op == e.Op }) {
			a = append(a, e)
		}
	}
	return a
}
