package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/cctop/cctop/cct"
	"github.com/cctop/cctop/correct"
	"github.com/cctop/cctop/sampler"
	"github.com/cctop/cctop/symbol"
)

// readNext takes sess's next batch into b and then, between batches, arms
// the automatic counters when the profile says it is time: re-arming
// replaces the session's events, which it does between two calls of Next.
// It returns how many records the batch held, and io.EOF once the run is
// over: ctx ended or the target exited (that batch held every record left),
// or the session was closed.
func readNext(ctx context.Context, sess *sampler.Session, b *builder, arm *armer) (int, error) {
	batch, err := sess.Next(ctx)
	b.handle(batch)
	n := len(batch.Records)
	if err != nil {
		return n, err
	}
	if arm.due(b) {
		if err := arm.arm(sess, b, arm.next(b)); err != nil && !errors.Is(err, sampler.ErrNoProcess) {
			arm.notes = append(arm.notes, "counting uprobes not armed: "+err.Error())
			arm.plan.auto = false
		}
	}
	if note := arm.switches.govern(sess, b, time.Now()); note != "" {
		arm.notes = append(arm.notes, note)
	}
	if drained, note := b.copies.govern(sess, time.Now()); drained != nil || note != "" {
		if drained != nil {
			b.handle(drained)
			if b.weights != nil {
				// Every event was reopened: counters start from zero.
				b.weights.reset(sess.Generation())
			}
		}
		if note != "" {
			arm.notes = append(arm.notes, note)
		}
	}
	return n, nil
}

// readToEnd takes every batch of sess into b until the target has exited
// and its records are read.
func readToEnd(sess *sampler.Session, b *builder) error {
	for {
		batch, err := sess.Next(context.Background())
		b.handle(batch)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// startSession opens the sampler on cfg's target and a builder for its
// samples, weighing them when the plan counts calls.
func startSession(cfg sampler.Config, plan *Plan, stderr io.Writer) (*sampler.Session, *builder, error) {
	offStart := monoNow()
	sess, err := sampler.Open(cfg)
	if err != nil {
		return nil, nil, err
	}
	if plan.unwind.learn && plan.unwind.copies == nil {
		plan.unwind.copies = newCopyPlan(leafStackSize, plan.unwind.stack)
		// Time off the CPU is timed by pairs of switch records, and a
		// reopen of every event loses the pairs it falls between: only
		// the threads that own their events change there.
		plan.unwind.copies.noReopen = plan.mode == ModeOffCPU || plan.mode == ModeWall
	}
	res := symbol.NewResolver()
	res.SetBudget(plan.limits.symbols)
	res.SetNamesOnly(plan.limits.namesOnly)
	if cfg.AllProcesses {
		// Each process's mappings are read when it is first sampled
		// (sampler.KindNewProcess).
	} else if err := res.LoadProc(sess.PID()); sampler.IsPermission(err) {
		fmt.Fprintf(stderr, "cctop: %s\n", sampler.MapsDenied(sess.PID()))
	} else if err != nil {
		fmt.Fprintf(stderr, "cctop: reading mappings of %d: %v\n", sess.PID(), err)
	}
	b := newSessionBuilder(res, plan, sess)
	b.entries = plan.entries
	if !plan.noPython {
		b.py = newPyStacks(cfg.Freq, plan.pyBudget)
		if !cfg.AllProcesses {
			// Looked at from the start, not from its first sample
			// taken: the Python stacks of the first samples are read
			// before the engine takes them.
			b.py.add(uint32(sess.PID()))
		}
	}
	if cfg.OffCPU {
		if err := beginOffCPU(sess, b, offStart); err != nil {
			fmt.Fprintf(stderr, "cctop: %v\n", err)
		}
	}
	return sess, b, nil
}

// newSessionBuilder is a builder for sess's samples that weighs them when
// the plan counts calls.
func newSessionBuilder(res *symbol.Resolver, plan *Plan, sess *sampler.Session) *builder {
	b := newBuilder(res)
	b.deferLoads = true
	b.clock = sess.Config().Leader.IsClock()
	b.dwarf = plan.unwind.mode == unwindDWARF
	b.copies = plan.unwind.copies
	b.maxNodes = plan.limits.nodes
	if plan.hasCalls() {
		b.weights = newWeighing(plan.trigger, sess.Event, plan.limits.log)
		if plan.trigger == triggerTime && plan.source.Kind == "uprobe" {
			b.weights.setMembers(plan.targets, plan.hitCost)
		}
		if plan.mode == ModeWall {
			b.weights.offNS = map[uint32]uint64{}
		}
	}
	if sess.Config().AllProcesses {
		b.pids = map[uint32]uint32{}
	}
	return b
}

// threadNames is the session's threads by TID, as a profile labels them.
func threadNames(sess *sampler.Session) map[uint32]cct.Thread {
	m := map[uint32]cct.Thread{}
	for _, th := range sess.Threads() {
		m[th.TID] = cct.Thread{TID: th.TID, PID: th.PID, Name: th.Name}
	}
	return m
}

// Recording is one finished sampling run.
type Recording struct {
	cfg     sampler.Config
	sess    *sampler.Session
	b       *builder
	plan    *Plan
	arm     *armer
	start   time.Time
	elapsed time.Duration
	notes   []string
	flow    *flowStats // what control-flow correction could use; nil: not applied
	procs   *processBook
}

// recordTarget samples cfg's target until it exits or ctx ends, and builds
// its tree. A target cctop launched is stopped when ctx ends first, and its
// last samples are kept. The caller closes rec.sess.
func recordTarget(ctx context.Context, cfg sampler.Config, plan *Plan, stderr io.Writer) (*Recording, error) {
	start := time.Now()
	sess, b, err := startSession(cfg, plan, stderr)
	if err != nil {
		return nil, err
	}
	b.enableProcesses(cfg.AllProcesses, uint32(sess.PID()))
	rec := &Recording{cfg: cfg, sess: sess, b: b, start: start, plan: plan, procs: bookOf(cfg, sess)}
	arm := newArmer(plan, sess)
	rec.arm = arm
	for {
		if _, err = readNext(ctx, sess, b, arm); err != nil {
			break
		}
	}
	rec.notes = arm.notes
	if !errors.Is(err, io.EOF) {
		sess.Close()
		return nil, err
	}
	if len(cfg.Argv) > 0 && !sess.Exited() {
		sess.Stop(2 * time.Second)
		if err := readToEnd(sess, b); err != nil {
			sess.Close()
			return nil, err
		}
	}
	rec.elapsed = time.Since(start)
	b.finish(monoNow())
	removePerfMaps(plan, b.res)
	if b.weights != nil {
		b.weights.apply(b.tree, plan.params.Alpha)
	}
	fs := b.applyFlow()
	rec.flow = &fs
	return rec, nil
}

func profileMeta(cfg sampler.Config, rec *Recording) cct.Meta {
	plan := rec.plan
	m := cct.Meta{
		SampleType: "cpu", Unit: "nanoseconds",
		TimeNanos: rec.start.UnixNano(), DurationNanos: rec.elapsed.Nanoseconds(),
		Threads: rec.b.pyThreadNames(threadNames(rec.sess)),
		Calls:   plan.hasCalls(),
		Flow:    rec.flow != nil,
		Modules: moduleInfo(rec.b),
	}
	if rec.b.off != nil {
		// The columns stay with a profile that recorded switches, in any
		// mode the TUI shows it in; pprof opens on the mode's.
		m.OffCPU, m.Wall = true, rec.b.clock
		switch plan.mode {
		case ModeOffCPU:
			m.DefaultType = cct.OffCPUType
		case ModeWall:
			m.DefaultType = cct.WallType
		}
	}
	switch {
	case cfg.Leader.UprobePath != "" || cfg.Leader == dummyEvent:
		m.SampleType, m.Unit = "probe_hits", "count"
	case !cfg.Leader.IsClock():
		m.SampleType, m.Unit = cfg.Leader.Name, "count"
	}
	m.PeriodType = m.SampleType
	if p := samplePeriod(cfg); p > 0 {
		m.Period = int64(p)
	} else if cfg.Leader.IsClock() && cfg.Freq > 0 {
		m.Period = int64(time.Second) / int64(cfg.Freq)
	}
	m.Comments = []string{
		"cctop record",
		"trigger=" + plan.trigger,
		"event=" + eventNames(cfg),
	}
	if p := samplePeriod(cfg); p > 0 {
		m.Comments = append(m.Comments, fmt.Sprintf("period=%d", p))
	} else {
		m.Comments = append(m.Comments, fmt.Sprintf("frequency=%dHz", cfg.Freq))
	}
	if u := rec.b.unwound.percent(); u >= 0 {
		m.Comments = append(m.Comments, fmt.Sprintf("unwound=%.1f%%", u))
	}
	if u := plan.unwind; u.mode != "" {
		m.Comments = append(m.Comments, fmt.Sprintf("unwind=%s stack_copy=%d", u.mode, u.stack))
		if c := u.copies; c != nil && c.samples > 0 {
			m.Comments = append(m.Comments, fmt.Sprintf("stack_copy_learned=fp+%d, %d for %.1f%% of samples",
				c.small, c.large, 100*float64(c.largeSamples)/float64(c.samples)))
		}
		if b := rec.b; b.samples > 0 && u.stack > 0 {
			m.Comments = append(m.Comments, fmt.Sprintf("stack_copied_mean=%d", b.stackBytes/b.samples))
		}
	}
	for _, st := range rec.b.unwound.topStops(3) {
		m.Comments = append(m.Comments, fmt.Sprintf("truncated_at=%s %.1f%% %s", st.Module, st.Percent, st.Why))
	}
	m.Comments = append(m.Comments, "memory="+rec.b.memoryLine())
	ingest := fmt.Sprintf("ingest=longest batch %.1f ms, %d records waited for modules loading aside",
		float64(rec.b.longest)/1e6, rec.b.parked.held)
	if w := rec.b.parked.waits; w > 0 {
		ingest += fmt.Sprintf(" (%d times past %d MB, the builder waited for the loads)", w, parkLimit>>20)
	}
	m.Comments = append(m.Comments, ingest)
	if lost := rec.sess.Stats().Lost; lost > 0 {
		m.Comments = append(m.Comments, fmt.Sprintf("lost_records=%d %s", lost, lostNote(plan.trigger, lost)))
	}
	if b := rec.b; b.folds > 0 {
		m.Comments = append(m.Comments, fmt.Sprintf("max_nodes=%d folded_contexts=%d", b.maxNodes, b.folded))
	}
	if w := rec.b.weights; w != nil {
		// The coverage rule's figures, for cctop view (fileSource.coverage).
		cov := w.log.Coverage()
		m.Comments = append(m.Comments, fmt.Sprintf("call_coverage=%d/%d samples carry a call count, %d of them a call%s", cov.Counted, cov.Samples, cov.Weighed, coverageVerdict(cov)))
	}
	if w := rec.b.weights; w != nil && w.log.Dropped() > 0 {
		m.Comments = append(m.Comments, fmt.Sprintf("max_log=%d calls_window=newest %d of %d samples", w.log.Cap(), w.log.Len(), uint64(w.log.Len())+w.log.Dropped()))
	}
	m.Comments = append(m.Comments,
		fmt.Sprintf("alpha=%g", plan.params.Alpha),
		"counters="+plan.describe(),
		"counter_brief="+counterBrief(plan, rec.arm),
		"calls/count=density weight; calls_adjusted/count=density and latency weight; calls_flow/count=control-flow corrected (FDOM)",
		fmt.Sprintf("kernel_frames=%v", rec.sess.KernelFrames()))
	if o := rec.b.off; o != nil {
		src, _ := rec.sess.OffCPU()
		m.Comments = append(m.Comments, "mode="+plan.mode, "offcpu="+o.describe(src),
			"offcpu/nanoseconds=time off the CPU (blocked or waiting to run) by the stack it left with; wall/nanoseconds=on-CPU time plus offcpu")
	}
	return m
}

// coverageVerdict is what the coverage rule makes of cov for the summary
// and the profile's comments: "" where the calls columns stand for the
// profile.
func coverageVerdict(cov correct.Coverage) string {
	if cov.Enough() {
		return ""
	}
	return fmt.Sprintf(" (%s: too few to weigh the profile by calls; it opens on time)", cov.Why())
}

// lostNote says what lost records take from a profile of trigger: under
// the exact trigger each sample is one call, so the counts are short by
// about as many calls as records were lost (a few may have been other
// records), and nothing says under which contexts.
func lostNote(trigger string, lost uint64) string {
	switch trigger {
	case triggerExact:
		return fmt.Sprintf("the call counts are a lower bound, short by up to %d calls in all, in contexts unknown", lost)
	case triggerCalls:
		return "the sample counts are a lower bound; each lost sample stood for a period of calls"
	}
	return "the sample counts are a lower bound"
}

// writeProfile writes t in format to path, atomically.
func writeProfile(path, format string, t *cct.Tree, m cct.Meta) error {
	return writeAtomic(path, func(w io.Writer) error {
		if format == "folded" {
			// One value per line: samples, or the mode's nanoseconds.
			switch m.DefaultType {
			case cct.OffCPUType, cct.WallType:
				return t.WriteFoldedOf(w, modeTime(m.DefaultType))
			}
			return t.WriteFolded(w)
		}
		return t.WriteProfile(w, m)
	})
}

func summary(w io.Writer, cfg sampler.Config, rec *Recording) {
	sess, b, st, elapsed := rec.sess, rec.b, rec.sess.Stats(), rec.elapsed
	fmt.Fprintf(w, "cctop: %d samples in %.1fs (%s), %d threads, %d lost, %d throttled\n",
		b.samples, elapsed.Seconds(), Describe(cfg), sess.ThreadsSeen(), st.Lost, st.Throttled)
	if rec.plan != nil {
		fmt.Fprintf(w, "cctop: trigger %s; %s\n", rec.plan.trigger, rec.plan.describe())
		if st.Lost > 0 {
			fmt.Fprintf(w, "cctop: %d records lost: %s\n", st.Lost, lostNote(rec.plan.trigger, st.Lost))
		}
		if b.weights != nil && rec.plan.trigger == triggerTime {
			if l := b.weights.ledger; l.runCost > 0 {
				fmt.Fprintf(w, "cctop: counting cost %.1f%% of the target's CPU time over the run, %.1f%% in its worst %v (budget %.0f%%%s; %d probe hits at %s, trials %.1f ms)\n",
					100*l.run(), 100*l.worstWindow(), costWindow, 100*rec.arm.budget, rec.arm.projectedNote(),
					b.weights.runHits+b.weights.totalHits(), rec.plan.costWords(), float64(l.trialCost)/1e6)
			}
			if cov := b.weights.log.Coverage(); cov.Counted < cov.Samples || !cov.Enough() {
				fmt.Fprintf(w, "cctop: %d of %d samples carry a call count (%.0f%%), %d of them a call; the others weigh 0 in calls/count%s\n",
					cov.Counted, cov.Samples, 100*cov.Share(), cov.Weighed, coverageVerdict(cov))
			}
		}
		if share := b.probeShare(false); share > 0 {
			fmt.Fprintf(w, "cctop: %.1f%% of samples were taken while the kernel handled the counting probes (%s in the profile)\n",
				share, cct.ProbesName)
		}
	}
	fmt.Fprintf(w, "cctop: memory: %s\n", b.memoryLine())
	if b.unwound.percent() >= 0 {
		fmt.Fprintf(w, "cctop: stacks: %s\n", &b.unwound)
		for _, st := range b.unwound.topStops(3) {
			fmt.Fprintf(w, "cctop: stacks stop short in %s\n", st)
		}
	}
	if rec.plan != nil && rec.plan.runtime != "" {
		fmt.Fprintf(w, "cctop: %s\n", rec.plan.runtime)
	}
	for _, l := range b.pyLines() {
		fmt.Fprintf(w, "cctop: %s\n", l)
	}
	for _, p := range b.res.JITProblems() {
		fmt.Fprintf(w, "cctop: jitdump %s\n", p)
	}
	if rec.plan != nil && rec.plan.unwind.mode != "" {
		fmt.Fprintf(w, "cctop: %s\n", rec.plan.unwind)
		if c := rec.plan.unwind.copied(b.stackBytes, b.samples); c != "" {
			fmt.Fprintf(w, "cctop: %s\n", c)
		}
	}
	if f := rec.flow; f != nil && f.Funcs > 0 {
		fmt.Fprintf(w, "cctop: control flow: %s (calls_flow/count)\n", f)
	}
	for _, l := range b.bounds() {
		fmt.Fprintf(w, "cctop: %s\n", l)
	}
	for _, l := range b.jitRegionLines(threadNames(sess), 3) {
		fmt.Fprintf(w, "cctop: %s\n", l)
	}
	for _, l := range b.jitLines(threadNames(sess)) {
		fmt.Fprintf(w, "cctop: %s\n", l)
	}
	if o := b.off; o != nil {
		src, why := sess.OffCPU()
		fmt.Fprintf(w, "cctop: off-CPU: %s\n", o.describe(src))
		if why != "" {
			fmt.Fprintf(w, "cctop: off-CPU stacks: %s\n", why)
		}
		if tot := b.tree.Total(); b.clock && tot.Wall > 0 {
			fmt.Fprintf(w, "cctop: wall time %.3fs over %d threads, %.1f%% of it on the CPU\n",
				float64(tot.Wall)/1e9, len(b.tree.ThreadTotals()), 100*float64(tot.Time)/float64(tot.Wall))
		}
	}
	for _, n := range append(append(sess.Notes(), rec.notes...), faultNotes(sess.Target(), st)...) {
		fmt.Fprintf(w, "cctop: note: %s\n", n)
	}
	if s := targetSummary(cfg, sess); s != "" {
		fmt.Fprintf(w, "cctop: %s\n", s)
	}
	if rec.plan != nil && rec.plan.mode != ModeCPU && rec.plan.mode != "" {
		modeTop(w, b.tree, rec.plan.mode)
		return
	}
	flat := b.tree.Flat()
	total := b.tree.Total()
	if len(flat) == 0 || total.Time == 0 {
		return
	}
	calls := total.Calls > 0
	pct := func(v, of int64) float64 { return 100 * float64(v) / float64(of) }
	if calls {
		fmt.Fprintf(w, "%8s %8s %8s %8s  %s\n", "self%", "total%", "calls%", "adj%", "function (top 10 by self time; calls% and adj% are self shares of calls/count and calls_adjusted/count)")
	} else {
		fmt.Fprintf(w, "%8s %8s  %s\n", "self%", "total%", "function (top 10 by self time)")
	}
	shown := 0
	for _, f := range flat {
		if shown == 10 || f.Self.Time == 0 {
			break
		}
		name := b.tree.Func(f.Func).Name
		if name == cct.ProbesName {
			// cctop's own cost: its line above, not a function of the
			// program's (as the TUI leaves it out of its rows).
			continue
		}
		shown++
		if calls {
			fmt.Fprintf(w, "%7.2f%% %7.2f%% %7.2f%% %7.2f%%  %s\n", pct(f.Self.Time, total.Time), pct(f.Total.Time, total.Time),
				pct(f.Self.Calls, total.Calls), pct(f.Self.CallsAdj, max(total.CallsAdj, 1)), name)
		} else {
			fmt.Fprintf(w, "%7.2f%% %7.2f%%  %s\n", pct(f.Self.Time, total.Time), pct(f.Total.Time, total.Time), name)
		}
	}
}

// modeTop is the summary's top functions by self time off the CPU, or wall
// time, of the threads that are not idle. A wait's time is the function's
// that waited: the first frame outside the kernel above its [off-cpu:]
// leaf, where the stack reaches user space.
func modeTop(w io.Writer, t *cct.Tree, mode string) {
	of := modeTime(mode)
	idle := idleThreads(t.ThreadTotals())
	self, cum := map[cct.FuncID]int64{}, map[cct.FuncID]int64{}
	var total int64
	var seen []cct.FuncID
	for id := 1; id < t.Len(); id++ {
		n := t.Node(cct.NodeID(id))
		var v int64
		for _, ts := range t.Threads(cct.NodeID(id)) {
			if !idle[ts.TID] {
				v += of(ts.Self)
			}
		}
		if v == 0 {
			continue
		}
		total += v
		fn := n.Func
		if _, wait := cct.OffCPUReason(t.Func(fn).Name); wait {
			for p := n.Parent; p > 0; p = t.Node(p).Parent {
				if f := t.Node(p).Func; t.Func(f).Module != symbol.KernelModule {
					fn = f
					break
				}
			}
		}
		self[fn] += v
		// Each function on the path once, as pprof counts a recursion.
		seen = seen[:0]
		for p := cct.NodeID(id); p > 0; p = t.Node(p).Parent {
			if f := t.Node(p).Func; !slices.Contains(seen, f) {
				seen = append(seen, f)
				cum[f] += v
			}
		}
	}
	if total == 0 {
		return
	}
	funcs := slices.Collect(maps.Keys(self))
	slices.SortFunc(funcs, func(a, b cct.FuncID) int {
		return cmp.Or(cmp.Compare(self[b], self[a]), cmp.Compare(t.Func(a).Name, t.Func(b).Name))
	})
	what := map[string]string{ModeOffCPU: "off-CPU", ModeWall: "wall"}[mode]
	fmt.Fprintf(w, "%8s %8s  function (top 10 by self %s time, a wait's time the function's that waited", "self%", "total%", what)
	if len(idle) > 0 {
		fmt.Fprintf(w, "; %d idle threads left out", len(idle))
	}
	fmt.Fprintln(w, ")")
	for i, f := range funcs {
		if i == 10 {
			break
		}
		fmt.Fprintf(w, "%7.2f%% %7.2f%%  %s\n", 100*float64(self[f])/float64(total), 100*float64(cum[f])/float64(total), t.Func(f).Name)
	}
}

func targetName(cfg sampler.Config, sess *sampler.Session) string {
	if cfg.AllProcesses {
		n := sess.CPUs()
		cpus := fmt.Sprintf("%d %s", n, plural(n, "CPU", "CPUs"))
		if sel := cfg.Select; sel != nil {
			var what []string
			if len(sel.PIDs) > 0 {
				what = append(what, plural(len(sel.PIDs), "pid ", "pids ")+strings.Trim(strings.Join(strings.Fields(fmt.Sprint(sel.PIDs)), ","), "[]"))
			}
			if len(sel.Names) > 0 {
				what = append(what, "processes named "+strings.Join(sel.Names, ","))
			}
			return fmt.Sprintf("%s and their children (%s)", strings.Join(what, ", "), cpus)
		}
		return fmt.Sprintf("the host (%s)", cpus)
	}
	if len(cfg.Argv) > 0 {
		// The command without its path: the header cuts what does not
		// fit its width at a word, never inside an argument's number.
		cmd := strings.Join(append([]string{filepath.Base(cfg.Argv[0])}, cfg.Argv[1:]...), " ")
		return fmt.Sprintf("%s (pid %d)", cmd, sess.PID())
	}
	comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", cfg.PID))
	return fmt.Sprintf("pid %d (%s)", cfg.PID, strings.TrimSpace(string(comm)))
}
func mustEvent(name string) sampler.EventSpec {
	e, err := sampler.ParseEvent(name)
	if err != nil {
		panic(err)
	}
	return e
}
