package engine

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/cctop/cctop/cct"
	"github.com/cctop/cctop/correct"
	"github.com/cctop/cctop/hpm"
	"github.com/cctop/cctop/internal/testutil"
	"github.com/cctop/cctop/sampler"
	"github.com/cctop/cctop/symbol"
	"github.com/cctop/cctop/tui"
)

// kernelChain is a kernel stack as frames, from "leaf <- caller <- ...".
func kernelChain(chain string) []symbol.Frame {
	var fs []symbol.Frame
	for _, n := range strings.Split(chain, " <- ") {
		fs = append(fs, symbol.Frame{Func: n, Module: symbol.KernelModule})
	}
	return fs
}

// handlerNames are kernel functions of the uprobe handling that must not
// be frames of their own once it is folded.
var handlerNames = []string{"asm_exc_int3", "irqentry_exit_to_user_mode", "uprobe_notify_resume", "handler_chain",
	"uprobe_dispatcher", "__uprobe_perf_func", "perf_tp_event", "arch_uprobe_skip_sstep", "find_active_uprobe_rcu", "mtree_load"}

// TestProbePath: the kernel part of a stack is a counting probe's handling
// when it entered the kernel by the int3 or debug trap, or runs uprobe code;
// kernel chains as measured here (perf record -g while cctop counted), and
// ordinary ones that are not.
func TestProbePath(t *testing.T) {
	for _, c := range []struct {
		chain string
		want  bool
	}{
		{"mtree_load <- find_active_uprobe_rcu <- uprobe_notify_resume <- irqentry_exit_to_user_mode <- asm_exc_int3", true},
		{"perf_tp_event <- __uprobe_perf_func <- uprobe_dispatcher <- handler_chain <- uprobe_notify_resume <- irqentry_exit_to_user_mode <- asm_exc_int3", true},
		{"_copy_to_user <- emulate_push_stack <- push_emulate_op <- arch_uprobe_skip_sstep <- uprobe_notify_resume <- irqentry_exit_to_user_mode <- asm_exc_int3", true},
		{"mutex_lock <- prepare_uprobe_buffer.part.0 <- __uprobe_perf_func <- uprobe_dispatcher <- handler_chain <- uprobe_notify_resume <- irqentry_exit_to_user_mode <- asm_exc_int3", true},
		// No uprobe frame at all, but entered through the trap.
		{"irqentry_exit_to_user_mode <- asm_exc_int3", true},
		{"asm_exc_int3", true},
		{"should_optimize <- arch_uprobe_optimize <- uprobe_notify_resume <- irqentry_exit_to_user_mode <- asm_exc_int3", true},
		// The chain stops short of the trap entry: uprobe code says it.
		{"should_optimize <- arch_uprobe_optimize <- uprobe_notify_resume", true},
		// Single-stepping the probed instruction: the debug trap.
		{"uprobe_post_sstep_notifier <- exc_debug_user <- asm_exc_debug", true},
		{"irqentry_exit_to_user_mode <- noist_exc_debug", true},
		{"handle_swbp.isra.0 <- do_int3_user", true},
		{"handle_singlestep.cold <- uprobe_notify_resume <- exit_to_user_mode_loop", true},
		// Older kernels' entries.
		{"do_int3 <- int3", true},
		{"debug", true},
		// The uretprobe trampoline enters by a syscall.
		{"handle_trampoline <- uprobe_handle_trampoline <- __do_sys_uretprobe <- __x64_sys_uretprobe <- do_syscall_64 <- entry_SYSCALL_64_after_hwframe", true},
		{"uretprobe_dispatcher <- handle_trampoline", true},

		// An ordinary syscall.
		{"_copy_to_user <- cp_new_stat <- __do_sys_newfstatat <- do_syscall_64 <- entry_SYSCALL_64_after_hwframe", false},
		{"finish_task_switch.isra.0 <- __schedule <- schedule <- irqentry_exit_to_user_mode <- asm_sysvec_reschedule_ipi", false},
		{"irqentry_exit_to_user_mode <- asm_sysvec_reschedule_ipi", false},
		{"handle_softirqs <- __irq_exit_rcu <- sysvec_apic_timer_interrupt <- asm_sysvec_apic_timer_interrupt", false},
		{"irqentry_exit_to_user_mode <- asm_sysvec_apic_timer_interrupt", false},
		// A page fault, and int3 somewhere other than the entry.
		{"clear_page_erms <- do_anonymous_page <- handle_mm_fault <- do_user_addr_fault <- exc_page_fault <- asm_exc_page_fault", false},
		{"asm_exc_int3 <- do_syscall_64 <- entry_SYSCALL_64_after_hwframe", false},
		// Names that only look alike.
		{"int3_emulate_call <- text_poke_bp <- do_syscall_64", false},
		{"uprobe_notify_resume_x <- exc_int3x", false},
		// kallsyms unreadable: no names.
		{"", false},
	} {
		kernel := kernelChain(c.chain)
		if c.chain == "" {
			kernel = []symbol.Frame{{Module: symbol.KernelModule}, {Module: symbol.KernelModule}}
		}
		if got := probePath(kernel); got != c.want {
			t.Errorf("probePath(%s) = %v, want %v", c.chain, got, c.want)
		}
	}
	if probePath(nil) {
		t.Error("probePath of no kernel frames")
	}
}

// fakeKernel is a kallsyms table naming every function of chains, 0x100
// apart, and where each one is.
func fakeKernel(chains ...string) (string, map[string]uint64) {
	at := map[string]uint64{}
	var table strings.Builder
	for _, c := range chains {
		for _, f := range kernelChain(c) {
			if _, ok := at[f.Func]; !ok {
				at[f.Func] = 0xffffffff81000000 + uint64(len(at))*0x100
				fmt.Fprintf(&table, "%x T %s\n", at[f.Func], f.Func)
			}
		}
	}
	return table.String(), at
}

// TestBuilderFoldsProbes feeds the builder synthetic samples of the density
// workload's leaf with kernel chains: while counting probes are placed, the
// kernel's handling of one is one [cctop probes] frame under the leaf and
// counts towards the probes' share; other kernel paths, and every kernel
// path before any probe was placed, stay as they are.
func TestBuilderFoldsProbes(t *testing.T) {
	const (
		probe    = "perf_tp_event <- __uprobe_perf_func <- uprobe_dispatcher <- handler_chain <- uprobe_notify_resume <- irqentry_exit_to_user_mode <- asm_exc_int3"
		bare     = "irqentry_exit_to_user_mode <- asm_exc_int3"
		timer    = "handle_softirqs <- __irq_exit_rcu <- sysvec_apic_timer_interrupt <- asm_sysvec_apic_timer_interrupt"
		pid      = 4242
		kctx     = ^uint64(128) + 1 // PERF_CONTEXT_KERNEL
		uctx     = ^uint64(512) + 1 // PERF_CONTEXT_USER
		leafName = workloadPkg + "densityLeaf"
	)
	table, kaddr := fakeKernel(probe, bare, timer)
	res := symbol.NewResolver()
	res.UseKallsyms(strings.NewReader(table))
	// The workload's functions, from the cctop binary mapped whole at the
	// address that puts them at their ELF addresses.
	user := map[string]uint64{}
	for _, f := range []string{"densityLeaf", "densityPhaseC", "densityRounds"} {
		vaddr, _, err := symbol.FuncLocation(cctopBin, workloadPkg+f)
		if err != nil {
			t.Fatal(err)
		}
		user[f] = vaddr
	}
	vaddr, off, _ := symbol.FuncLocation(cctopBin, leafName)
	res.AddMapping(pid, symbol.Mapping{Start: vaddr - off, Limit: vaddr - off + 64<<20, Path: cctopBin})

	sample := func(chain string) sampler.Record {
		pcs := []uint64{kctx}
		for i, f := range kernelChain(chain) {
			pc := kaddr[f.Func] + 0x10
			if i > 0 {
				pc++ // a return address, which the builder steps back from
			}
			pcs = append(pcs, pc)
		}
		pcs = append(pcs, uctx, user["densityLeaf"]+0x20, user["densityPhaseC"]+0x21, user["densityRounds"]+0x31)
		return sampler.Record{Kind: sampler.KindSample, PID: pid, TID: pid, Time: 1, Period: 1e6, IP: pcs[1], Chain: pcs}
	}
	b := newBuilder(res)
	feed := func(chains ...string) {
		var batch sampler.Batch
		for _, c := range chains {
			batch.Records = append(batch.Records, sample(c))
		}
		b.handle(&batch)
	}
	// paths lists each node's function names from the root, children of
	// the leaf only.
	under := func() map[string]int64 {
		out := map[string]int64{}
		for id := 1; id < b.tree.Len(); id++ {
			n := b.tree.Node(cct.NodeID(id))
			if b.tree.Func(b.tree.Node(n.Parent).Func).Name == leafName {
				out[b.tree.Func(n.Func).Name] += n.Total.Samples
			}
		}
		return out
	}

	// No probe placed: an int3 is a debugger's, and stays.
	feed(probe)
	if got := under(); got["asm_exc_int3"] != 1 || got[cct.ProbesName] != 0 || b.probeSamples != 0 {
		t.Fatalf("before probes: under the leaf %v, %d folded", got, b.probeSamples)
	}
	if s := b.probeShare(false); s != -1 {
		t.Errorf("probe share %v with no probe and none folded, want -1", s)
	}

	b = newBuilder(res)
	b.entries = map[entryKey]bool{{cctopBin, user["densityLeaf"] + 4}: true}
	// Every sample carries a count, as under armed probes: the probe
	// handling's weigh nothing in any corrected column (issue 29).
	b.weights = newWeighing(triggerTime, func(uint64) (sampler.EventRef, bool) { return sampler.EventRef{Member: 1}, true }, 0)
	feed(probe, bare, timer, probe)
	for _, p := range []correct.Params{{Density: true}, {Latency: true, Alpha: 1}, {Density: true, Latency: true, Alpha: 1}} {
		w, total := b.weights.log.Reweight(p, nil)
		for id, x := range w {
			if x != 0 && b.tree.Func(b.tree.Node(cct.NodeID(id)).Func).Name == cct.ProbesName {
				t.Errorf("%v: %s weighs %v of %v", p, cct.ProbesName, x, total)
			}
		}
	}
	if cov := b.weights.log.Coverage(); cov.Samples != 1 {
		t.Errorf("coverage counts %d samples, want the one sample that is not the probes'", cov.Samples)
	}
	got := under()
	if got[cct.ProbesName] != 3 || got["asm_sysvec_apic_timer_interrupt"] != 1 || len(got) != 2 {
		t.Errorf("under the leaf %v, want 3 samples in %s and the timer interrupt's path", got, cct.ProbesName)
	}
	id, ok := b.tree.Find(cct.TruncatedName, workloadPkg+"densityRounds", workloadPkg+"densityPhaseC", leafName, cct.ProbesName)
	if !ok {
		t.Fatalf("no densityPhaseC → densityLeaf → %s path in\n%s", cct.ProbesName, treeText(b.tree))
	}
	if n := b.tree.Node(id); n.Self.Samples != 3 || n.Total.Samples != 3 {
		t.Errorf("%s: self %d, total %d samples, want 3 (a leaf)", cct.ProbesName, n.Self.Samples, n.Total.Samples)
	}
	if f := b.tree.Func(b.tree.Node(id).Func); f.Module != symbol.KernelModule {
		t.Errorf("%s has module %q, want the kernel's", cct.ProbesName, f.Module)
	}
	for id := 1; id < b.tree.Len(); id++ {
		if name := b.tree.Func(b.tree.Node(cct.NodeID(id)).Func).Name; slices.Contains(handlerNames, name) {
			t.Errorf("a node is named %s: the probe's handling is not folded\n%s", name, treeText(b.tree))
		}
	}
	if b.probeSamples != 3 || b.probeShare(false) != 75 || b.tree.SamplesOf(cct.ProbesName) != 3 {
		t.Errorf("%d samples folded, share %v%%, %d in the tree; want 3, 75%%, 3", b.probeSamples, b.probeShare(false), b.tree.SamplesOf(cct.ProbesName))
	}

	// The tree, written and read as cctop view reads it, gives the same
	// share.
	meta := cct.Meta{SampleType: "cpu", Unit: "nanoseconds", Comments: []string{"counters=call counter: uprobes on 1 function (densityLeaf)"}}
	path := filepath.Join(t.TempDir(), "p.pb.gz")
	if err := writeProfile(path, "pprof", b.tree, meta); err != nil {
		t.Fatal(err)
	}
	src, err := newFileSource(path, "")
	if err != nil {
		t.Fatal(err)
	}
	if h := src.Snapshot().Header; h.ProbeCost != 75 || h.CounterBrief != "uprobes" {
		t.Errorf("view: probe cost %v, counter %q; want 75 and uprobes", h.ProbeCost, h.CounterBrief)
	}

	// A sample in the [uprobes] page ran the instruction a probe displaced:
	// its user leaf and the kernel frames above it are the probe's too.
	const xol = 0x7fff0000
	res.AddMapping(pid, symbol.Mapping{Start: xol, Limit: xol + 0x1000, Path: xolModule})
	rec := sample(timer)
	for i, pc := range rec.Chain {
		if pc == user["densityLeaf"]+0x20 {
			rec.Chain[i] = xol + 0x10
		}
	}
	b = newBuilder(res)
	b.entries = map[entryKey]bool{{cctopBin, user["densityLeaf"] + 4}: true}
	var batch sampler.Batch
	batch.Records = append(batch.Records, rec)
	b.handle(&batch)
	if id, ok := b.tree.Find(cct.TruncatedName, workloadPkg+"densityRounds", workloadPkg+"densityPhaseC", cct.ProbesName); !ok {
		t.Errorf("a sample in %s is not [cctop probes] under the function below it:\n%s", xolModule, treeText(b.tree))
	} else if n := b.tree.Node(id); n.Self.Samples != 1 {
		t.Errorf("%d samples there, want 1", n.Self.Samples)
	}
	if b.probeSamples != 1 {
		t.Errorf("%d samples folded, want the %s one", b.probeSamples, xolModule)
	}
}

// treeText is the tree's paths for failure messages.
func treeText(t *cct.Tree) string {
	var out []string
	for id := 1; id < t.Len(); id++ {
		var names []string
		for _, f := range t.Path(cct.NodeID(id)) {
			names = append(names, cct.ShortName(t.Func(f).Name))
		}
		out = append(out, fmt.Sprintf("%s %d", strings.Join(names, " → "), t.Node(cct.NodeID(id)).Self.Samples))
	}
	return strings.Join(out, "\n")
}

// TestBuilderFoldsWithoutAllocating: folding reuses the builder's slices,
// as the rest of sample does, once the contexts exist.
func TestBuilderFoldsWithoutAllocating(t *testing.T) {
	b := newBuilder(nil)
	b.entries = map[entryKey]bool{{"/bin/x", 1}: true}
	chain := kernelChain("perf_tp_event <- __uprobe_perf_func <- uprobe_dispatcher <- handler_chain <- uprobe_notify_resume <- irqentry_exit_to_user_mode <- asm_exc_int3")
	if n := testing.AllocsPerRun(100, func() {
		b.frames = append(b.frames[:0], chain...)
		b.foldProbes(len(b.frames))
	}); n != 0 {
		t.Errorf("%v allocations per fold", n)
	}
}

// TestCounterBrief: the header's few words on the counter, for each kind
// and each state of automatic counting.
func TestCounterBrief(t *testing.T) {
	intel := hpm.CallEvent{Name: "BR_INST_RETIRED.NEAR_CALL", PMU: "cpu"}
	hybrid := []hpm.CallEvent{{Name: "BR_INST_RETIRED.NEAR_CALL", PMU: "cpu_core"}, {Name: "BR_INST_RETIRED.NEAR_CALL", PMU: "cpu_atom"}}
	amd := hpm.CallEvent{Name: "ex_ret_near_ret", Proxy: true}
	targets := func(n int) []hpm.Target { return make([]hpm.Target, n) }
	auto := func(targets []hpm.Target) *Plan {
		return &Plan{trigger: triggerTime, source: hpm.Source{Kind: "uprobe"}, auto: true, targets: targets}
	}
	before := newArmer(auto(nil), nil)
	armedNone := newArmer(auto(nil), nil)
	armedNone.armed = []string{}
	gaveUp := newArmer(auto(nil), nil)
	gaveUp.giveUp = true
	for _, c := range []struct {
		plan *Plan
		arm  *armer
		want string
	}{
		{nil, nil, "none"},
		{&Plan{source: hpm.Source{Kind: "none", Reason: "--calls none"}}, nil, "none"},
		{&Plan{source: hpm.Source{Kind: "hw", Events: []hpm.CallEvent{intel}}}, nil, "PMU NEAR_CALL"},
		{&Plan{source: hpm.Source{Kind: "hw", Events: hybrid}}, nil, "PMU NEAR_CALL"},
		{&Plan{source: hpm.Source{Kind: "hw", Events: []hpm.CallEvent{amd}}}, nil, "PMU ex_ret_near_ret"},
		{&Plan{source: hpm.Source{Kind: "hw", Events: []hpm.CallEvent{{Name: "branch-instructions", Weak: true}}}}, nil, "PMU branch-instructions"},
		{&Plan{source: hpm.Source{Kind: "uprobe", Functions: []string{"f"}}, targets: targets(1)}, nil, "uprobes on 1 function"},
		{&Plan{source: hpm.Source{Kind: "uprobe", Functions: []string{"f", "g"}}, targets: targets(2)}, nil, "uprobes on 2 functions"},
		{auto(nil), before, "uprobes, arming"},
		{auto(targets(4)), before, "uprobes on 4 functions"},
		{auto(nil), armedNone, "uprobes: none armed"},
		{auto(nil), gaveUp, "uprobes: none armed"},
		{auto(nil), nil, "uprobes: none armed"},
		{&Plan{source: hpm.Source{Kind: "hw", Events: []hpm.CallEvent{{Name: "A_VERY_LONG_EVENT_NAME_OF_SOME_PMU"}}}}, nil, "PMU A_VERY_LONG_EVENT_NAME_…"},
	} {
		got := counterBrief(c.plan, c.arm)
		if got != c.want {
			t.Errorf("counterBrief = %q, want %q", got, c.want)
		}
		if n := utf8.RuneCountInString(got); n > briefMax {
			t.Errorf("counterBrief %q: %d characters, more than %d", got, n, briefMax)
		}
	}
}

// TestBriefComment: cctop view takes the brief record wrote, and makes one
// of a profile's counters line when it has none.
func TestBriefComment(t *testing.T) {
	for _, c := range []struct {
		comments []string
		want     string
	}{
		{nil, ""},
		{[]string{"counters=call counter: none (--calls none)", "counter_brief=none"}, "none"},
		{[]string{"counters=call counter: uprobes on the 4 hottest functions", "counter_brief=uprobes on 3 functions"}, "uprobes on 3 functions"},
		{[]string{"counters=call counter: uprobes on the 4 hottest functions (chosen from the live profile); armed on a, b"}, "uprobes"},
		{[]string{"counters=call counter: none (no hardware PMU here)"}, "none"},
		{[]string{"counters=call counter: BR_INST_RETIRED.NEAR_CALL (cpu)"}, "PMU"},
	} {
		if got := briefComment(c.comments); got != c.want {
			t.Errorf("briefComment(%q) = %q, want %q", c.comments, got, c.want)
		}
	}
}

// probesInTree checks a profile of the density workload taken while its
// leaf was counted with a uprobe and kernel frames were sampled: samples
// of the kernel handling the probe sit in [cctop probes] frames right
// under probed functions (short names), the leaf among them, and no
// handler function is a frame anywhere. It returns the share of samples in
// [cctop probes].
func probesInTree(t *testing.T, tr *cct.Tree, probed ...string) float64 {
	t.Helper()
	var underLeaf int64
	for id := 1; id < tr.Len(); id++ {
		n := tr.Node(cct.NodeID(id))
		name, parent := tr.Func(n.Func).Name, tr.Func(tr.Node(n.Parent).Func).Name
		// irqentry_exit_to_user_mode also ends interrupts: only under the
		// int3 trap is it the probe's.
		if slices.Contains([]string{"asm_exc_int3", "uprobe_notify_resume", "handler_chain", "uprobe_dispatcher"}, name) ||
			name == "irqentry_exit_to_user_mode" && parent == "asm_exc_int3" {
			t.Errorf("a node is named %s: the kernel's handling of a counting probe is not folded\n  %s", name, pathText(tr, cct.NodeID(id)))
		}
		if name != cct.ProbesName {
			continue
		}
		// A signal (Go's preemption signal, say) that comes while the
		// kernel handles a probe may be delivered on the way back to user
		// space: the user stack then ends in the signal trampoline.
		signal := slices.Contains([]string{"runtime.sigtramp", "runtime.cgoSigtramp", "__restore_rt"}, parent)
		if !signal && !slices.Contains(probed, cct.ShortName(parent)) {
			t.Errorf("%s under %s, not under a probed function (%q)", cct.ProbesName, parent, probed)
		}
		if parent == workloadPkg+"densityLeaf" {
			underLeaf += n.Total.Samples
		}
		if n.Total.Samples != n.Self.Samples {
			t.Errorf("%s has callees: %s", cct.ProbesName, pathText(tr, cct.NodeID(id)))
		}
	}
	n, total := tr.SamplesOf(cct.ProbesName), tr.Total().Samples
	if underLeaf == 0 {
		t.Fatalf("no sample of the probe's handling under densityLeaf (%d samples in %s of %d)", n, cct.ProbesName, total)
	}
	return 100 * float64(n) / float64(total)
}

// pathText is one node's path of short names.
func pathText(tr *cct.Tree, id cct.NodeID) string {
	var names []string
	for _, f := range tr.Path(id) {
		names = append(names, cct.ShortName(tr.Func(f).Name))
	}
	return strings.Join(names, " → ")
}

// TestRecordFoldsProbes records the density workload with automatic
// counting, which arms a uprobe on its leaf, and kernel frames (record
// samples them unless --user): the kernel's handling of the probes is one
// [cctop probes] frame under the leaf, and the summary's share of samples
// there is the profile's.
func TestRecordFoldsProbes(t *testing.T) {
	testutil.SkipIfNoUprobes(t, cctopBin)
	dir := t.TempDir()
	// The leaf by name, not --calls auto: auto arms the hottest functions
	// at the time, start-up code among them, and a CI run armed Go's
	// assembly indexbytebody, entered by a jump from its callers' callee,
	// whose probe cost then sat under runtime.findnull (noted as a limit).
	// What this test is about is the folding under a probed function.
	calls := "uprobe:" + workloadPkg + "densityLeaf"
	// 11 µs a leaf call: about 5% of the time goes to the probe; a budget
	// that keeps it counted whatever the trial sees on a busy machine. A
	// fixed amount of work (about 3 s of CPU), not a deadline: a CI run
	// starved the workload to 79 samples in 3 s, too few to arm on.
	_, stderr, code := testutil.Run(t, cctopBin, dir, "record", "--calls", calls, "--budget", "30", "-o", "p.pb.gz", "--",
		cctopBin, "workload", "density", "-size", "5000", "-calls", "200", "-rounds", "400")
	if code != 0 {
		t.Fatalf("record: %s", stderr)
	}
	if strings.Contains(stderr, "kernel frames excluded") {
		t.Skipf("kernel frames are not sampled here:\n%s", stderr)
	}
	probed := []string{"workload.densityLeaf"}
	tr, meta, err := readTree(filepath.Join(dir, "p.pb.gz"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(meta.Comments, "kernel_frames=true") {
		t.Fatalf("the profile has no kernel frames: %q", meta.Comments)
	}
	share := probesInTree(t, tr, probed...)
	var said float64
	i := strings.Index(stderr, "% of samples were taken while the kernel handled the counting probes")
	if i < 0 {
		t.Fatalf("the summary gives no share of samples in %s:\n%s", cct.ProbesName, stderr)
	}
	fmt.Sscanf(stderr[strings.LastIndexByte(stderr[:i], ' ')+1:], "%g", &said)
	if d := said - share; d < -0.05 || d > 0.05 {
		t.Errorf("the summary says %.1f%% of samples in %s, the profile has %.2f%%", said, cct.ProbesName, share)
	}
	src, err := newFileSource(filepath.Join(dir, "p.pb.gz"), "")
	if err != nil {
		t.Fatal(err)
	}
	h := src.Snapshot().Header
	if h.ProbeCost != share || !strings.HasPrefix(h.CounterBrief, "uprobes on ") {
		t.Errorf("view: probe cost %v (the tree: %v), counter %q", h.ProbeCost, share, h.CounterBrief)
	}
	t.Logf("%.2f%% of %d samples in %s; counter %q", share, tr.Total().Samples, cct.ProbesName, h.CounterBrief)
}

// TestLiveFoldsProbes runs the live profile as cctop top does, with kernel
// frames and a uprobe counting the leaf: the header's probe cost is the
// share of the snapshot's samples in [cctop probes], also after a reset
// replaced the builder.
func TestLiveFoldsProbes(t *testing.T) {
	testutil.SkipIfNoUprobes(t, cctopBin)
	l, stop := startLive(t, false, func(o *Options) { o.Calls = "uprobe:" + workloadPkg + "densityLeaf" })
	defer stop()
	if !l.sess.KernelFrames() {
		t.Skip("kernel frames are not sampled here (perf_event_paranoid)")
	}
	check := func(what string) {
		t.Helper()
		s := waitSnap(t, l, what, func(s tui.Snapshot) bool {
			return s.Tree.Total().Samples > 500 && s.Tree.SamplesOf(cct.ProbesName) > 0
		})
		share := probesInTree(t, s.Tree, "workload.densityLeaf")
		if s.Header.ProbeCost != share {
			t.Errorf("%s: header probe cost %v%%, the snapshot's tree %v%%", what, s.Header.ProbeCost, share)
		}
		if s.Header.CounterBrief != "uprobes on 1 function" {
			t.Errorf("%s: counter %q", what, s.Header.CounterBrief)
		}
		t.Logf("%s: %.2f%% of %d samples in %s", what, share, s.Tree.Total().Samples, cct.ProbesName)
	}
	check("samples in [cctop probes]")
	l.Do(tui.Action{Kind: tui.Reset})
	waitSnap(t, l, "the reset", func(s tui.Snapshot) bool { return s.Tree.Total().Samples < 500 })
	check("samples in [cctop probes] after a reset")
}
