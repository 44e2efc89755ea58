package engine

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	tea "charm.land/bubbletea/v2"
	"github.com/cctop/cctop/cct"
	"github.com/cctop/cctop/correct"
	"github.com/cctop/cctop/tui"
	"github.com/google/pprof/profile"
)

// fileSource shows a saved profile: its time, or its call estimates as the
// density and latency toggles pick them, against a base profile.
type fileSource struct {
	name string
	// prof and baseProf are the profiles as read: the trees are built
	// from them for the sample type shown (index).
	prof, baseProf *profile.Profile
	index          int
	// cycle is the order the sample-type key steps through the types: the
	// first shown, the others of its unit (alloc_space after inuse_space),
	// then the rest, in the profile's order. Time off the CPU is shown
	// through the mode instead, and is not in it.
	cycle      []int
	tree, base *cct.Tree
	meta       cct.Meta
	baseCalls  bool // the base profile has call estimates
	msgs       chan tea.Msg

	// acting runs one action at a time (each comes on its own
	// goroutine): view and seq are its.
	acting sync.Mutex
	view   viewState
	seq    uint64

	mu   sync.Mutex // snap's, apart: a snapshot does not wait for an export
	snap tui.Snapshot
}

func newFileSource(path, basePath string) (*fileSource, error) {
	l, err := loadProfiles(ViewOptions{Sources: []string{path}, Base: basePath})
	if err != nil {
		return nil, err
	}
	return newFileSourceOf(l)
}

func newFileSourceOf(l *loaded) (*fileSource, error) {
	s := &fileSource{name: l.name, prof: l.prof, baseProf: l.base, index: l.index, msgs: make(chan tea.Msg, 8)}
	s.cycle = typeCycle(l.prof.SampleType, l.index)
	if err := s.build(); err != nil {
		return nil, err
	}
	m := s.meta
	// The file's estimates are at the alpha it was recorded with.
	var alpha float64
	fmt.Sscanf(commentValue(m.Comments, "alpha="), "%g", &alpha)
	params, comparison := correct.Params{Density: true, Latency: true, Alpha: alpha}, ""
	if s.base != nil {
		comparison = "base file"
	}
	mode := ModeCPU
	switch m.DefaultType {
	case cct.OffCPUType:
		mode = ModeOffCPU
	case cct.WallType:
		mode = ModeWall
	}
	s.view = newViewState(params, comparison, mode)
	// Calls first where the file counted any: a recording whose counters
	// counted nothing in it (too hot to count within the budget) would
	// show an empty tree.
	// Not where too few samples carry a count: the file's calls would be
	// a sliver's (the coverage rule).
	cov, known := s.coverage()
	if tot := s.tree.Total(); m.Calls && (tot.Calls != 0 || tot.CallsAdj != 0) && (!known || cov.Enough()) {
		s.view.suggestMetric("calls")
	}
	s.rebuild()
	return s, nil
}

// build makes the trees of the sample type shown, of the profile and of the base.
// It changes nothing when it fails.
func (s *fileSource) build() error {
	t, m, err := cct.FromProfileType(s.prof, s.index)
	if err != nil {
		return fmt.Errorf("%s: %v", s.name, err)
	}
	var b *cct.Tree
	var baseCalls bool
	if s.baseProf != nil {
		// loadProfiles made sure that the base has the same sample types.
		var bm cct.Meta
		if b, bm, err = cct.FromProfileType(s.baseProf, s.index); err != nil {
			return fmt.Errorf("base: %v", err)
		}
		b.Settle()
		baseCalls = bm.Calls
		// What only the base has is in the diff too, as what went away.
		t.MergeShape(b)
	}
	// The trees are read by the TUI's goroutine and under the source's
	// lock at once: their totals are settled now, so that no read writes.
	t.Settle()
	s.tree, s.meta, s.base, s.baseCalls = t, m, b, baseCalls
	return nil
}

// typeCycle is the order of fileSource.cycle, from first.
func typeCycle(types []*profile.ValueType, first int) []int {
	order := []int{first}
	offCPU := func(i int) bool { return types[i].Type == cct.OffCPUType || types[i].Type == cct.WallType }
	for pass := 0; pass < 2; pass++ {
		for i, vt := range types {
			if i == first || offCPU(i) || (vt.Unit == types[first].Unit) != (pass == 0) {
				continue
			}
			order = append(order, i)
		}
	}
	return order
}

// nextType steps to the next sample type of the cycle, false when there is no other.
func (s *fileSource) nextType() bool {
	if len(s.cycle) < 2 {
		return false
	}
	at := slices.Index(s.cycle, s.index)
	s.index = s.cycle[(at+1)%len(s.cycle)]
	return true
}

func (s *fileSource) Snapshot() tui.Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.snap
}

func (s *fileSource) Msgs() <-chan tea.Msg { return s.msgs }

func (s *fileSource) Do(a tui.Action) {
	go s.do(a)
}

func (s *fileSource) do(a tui.Action) {
	s.acting.Lock()
	defer s.acting.Unlock()
	switch {
	case a.Kind == tui.Export:
		s.view.export(a.Path, s)
	case a.Kind == tui.CycleSampleType:
		s.cycleType()
	case s.view.act(a, s):
		s.rebuild()
		s.send(tui.SnapshotReadyMsg{})
	default:
		s.send(tui.StatusMsg{Text: a.Kind.String() + " needs a live target"})
	}
}

// cycleType shows the next sample type, as its time: the metric and mode that would
// hide it go back to time on the CPU.
func (s *fileSource) cycleType() {
	old := s.index
	if !s.nextType() {
		vt := s.prof.SampleType[s.index]
		s.send(tui.StatusMsg{Text: "this profile has one sample type, " + vt.Type + "/" + vt.Unit})
		return
	}
	if err := s.build(); err != nil {
		s.index = old
		s.send(tui.ErrorMsg{Err: err})
		return
	}
	s.view.metric, s.view.metricChosen, s.view.mode = "time", true, ModeCPU
	s.rebuild()
	s.send(tui.SnapshotReadyMsg{})
	vt := s.prof.SampleType[s.index]
	s.send(tui.StatusMsg{Text: fmt.Sprintf("sample type %s/%s (%d of %d)", vt.Type, vt.Unit, s.index+1, len(s.prof.SampleType))})
}

func (s *fileSource) send(m tea.Msg) {
	select {
	case s.msgs <- m:
	default:
	}
}

// The saved profile as the view sees it (viewTarget).

func (s *fileSource) shown() *cct.Tree { return s.tree }

func (s *fileSource) calls(p correct.Params) []float64 {
	if !s.meta.Calls {
		return nil
	}
	return fileCalls(s.tree, p)
}

// flowCalls is the profile's calls_flow column, the flow correction made
// when it was recorded; nil when it has none.
func (s *fileSource) flowCalls(correct.Params) []float64 {
	if !s.meta.Flow {
		return nil
	}
	return selfOf(s.tree, func(m cct.Metrics) int64 { return m.CallsFlow })
}

func (s *fileSource) compared(name string, calls bool, p correct.Params) ([]float64, bool) {
	if name != "base file" || s.base == nil {
		return nil, false
	}
	if !calls {
		return mapOnto(s.tree, s.base, selfOf(s.base, func(m cct.Metrics) int64 { return m.Time })), true
	}
	if !s.baseCalls {
		return nil, true // no calls to compare with
	}
	return mapOnto(s.tree, s.base, fileCalls(s.base, p)), true
}

// reweighs is false: the file holds no samples to weigh, only the
// estimates at the alpha it was recorded with.
func (s *fileSource) reweighs() bool { return false }

func (s *fileSource) offCPU() bool { return s.meta.OffCPU }

// switchMode shows a mode the file has the time of.
func (s *fileSource) switchMode(mode string) error {
	switch {
	case mode == ModeOffCPU && !s.meta.OffCPU, mode == ModeWall && !s.meta.Wall:
		return fmt.Errorf("this profile holds no %s time (%s/nanoseconds, which cctop record --mode %s writes)", mode, mode, mode)
	}
	return nil
}

// save writes the profile as it was read: its estimates cannot change.
func (s *fileSource) save(path string, _ correct.Params) error {
	return writeProfile(path, "pprof", s.tree, s.meta)
}

// fileCalls is the call estimates of t that the file holds for p: with
// both corrections, under density alone, or none, the samples. The file
// has no estimate under latency alone; that is none too.
func fileCalls(t *cct.Tree, p correct.Params) []float64 {
	return withoutProbes(t, selfOf(t, func(m cct.Metrics) int64 {
		switch {
		case p.Density && p.Latency:
			return m.CallsAdj
		case p.Density:
			return m.Calls
		}
		return m.Samples
	}))
}

func (s *fileSource) rebuild() {
	threads := make([]cct.Thread, 0, len(s.meta.Threads))
	for _, th := range s.meta.Threads {
		threads = append(threads, th)
	}
	s.seq++
	trigger := commentValue(s.meta.Comments, "trigger=")
	var lost uint64
	fmt.Sscanf(commentValue(s.meta.Comments, "lost_records="), "%d", &lost)
	snap := tui.Snapshot{
		Tree: s.tree, Threads: threads, Seq: s.seq,
		Header: tui.Header{
			Target: s.name, Threads: len(threads), Samples: s.samples(), Unwound: unwoundComment(s.meta.Comments),
			Counter: commentValue(s.meta.Comments, "counters="), CounterBrief: briefComment(s.meta.Comments),
			ProbeCost: probeCostOf(s.tree), Trigger: trigger, TriggerLost: triggerLost(trigger, lost), State: "file",
			File: s.fileInfo(),
		},
		Unit: s.meta.Unit,
	}
	s.view.show(&snap, s)
	// Against a base file the metric column is the difference, as pprof's
	// -diff_base shows it.
	snap.Diff = snap.Compare != nil && snap.Header.Comparison == "base file"
	s.mu.Lock()
	s.snap = snap
	s.mu.Unlock()
}

// samples is the header's count of samples: the samples column's total where the
// profile has one, else how many samples the file holds (a heap profile's are its
// allocation sites).
func (s *fileSource) samples() uint64 {
	for _, vt := range s.prof.SampleType {
		if vt.Type == "samples" {
			return uint64(s.tree.Total().Samples)
		}
	}
	return uint64(len(s.prof.Sample))
}

// fileInfo is what the header says of the profile.
func (s *fileSource) fileInfo() *tui.FileInfo {
	p := s.prof
	f := &tui.FileInfo{
		SampleType: s.meta.SampleType, Unit: s.meta.Unit, Types: len(p.SampleType),
		Period: p.Period, TimeNanos: p.TimeNanos, DurationNanos: p.DurationNanos,
		Corrections: s.meta.Calls,
	}
	if p.PeriodType != nil {
		f.PeriodType, f.PeriodUnit = p.PeriodType.Type, p.PeriodType.Unit
	}
	for _, c := range p.Comments {
		if !keyValueComment(c) {
			f.Comments = append(f.Comments, c)
		}
	}
	// pprof's rule: the first mapping is the main binary.
	if len(p.Mapping) > 0 {
		f.Main, f.BuildID = p.Mapping[0].File, p.Mapping[0].BuildID
	}
	return f
}

// keyValueComment says whether c is one of the key=value comments cctop writes, which the
// header reads into its own facts.
func keyValueComment(c string) bool {
	k, _, ok := strings.Cut(c, "=")
	if !ok || k == "" {
		return false
	}
	for _, r := range k {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// unwoundComment is the unwound share cctop record wrote, or -1.
func unwoundComment(comments []string) float64 {
	var pct float64
	if _, err := fmt.Sscanf(commentValue(comments, "unwound="), "%g%%", &pct); err != nil {
		return -1
	}
	return pct
}

// briefComment is the counter in a few words as cctop record wrote it, or,
// in a profile from before it did, the kind of counter its counters line
// names.
func briefComment(comments []string) string {
	if b := commentValue(comments, "counter_brief="); b != "" {
		return b
	}
	switch c := strings.TrimPrefix(commentValue(comments, "counters="), "call counter: "); {
	case c == "":
		return ""
	case strings.HasPrefix(c, "none"):
		return "none"
	case strings.HasPrefix(c, "uprobes"):
		return "uprobes"
	}
	return "PMU"
}

// coverage is the counted samples the file's comments state
// (call_coverage=N/M samples carry a call count, K of them a call, as cctop
// record writes it), unknown where it has none.
func (s *fileSource) coverage() (correct.Coverage, bool) {
	var c correct.Coverage
	if v := commentValue(s.meta.Comments, "call_coverage="); v != "" {
		if n, _ := fmt.Sscanf(v, "%d/%d samples carry a call count, %d", &c.Counted, &c.Samples, &c.Weighed); n == 3 {
			return c, true
		}
	}
	return c, false
}

// probeCostOf is the share of t's samples, in percent, in cct.ProbesName
// frames: taken while the kernel handled a counting probe. -1 with none.
func probeCostOf(t *cct.Tree) float64 {
	n, total := t.SamplesOf(cct.ProbesName), t.Total().Samples
	if n == 0 || total == 0 {
		return -1
	}
	return 100 * float64(n) / float64(total)
}

func commentValue(comments []string, key string) string {
	for _, c := range comments {
		if strings.HasPrefix(c, key) {
			return strings.TrimPrefix(c, key)
		}
	}
	return ""
}

// mapOnto carries per-node weights of base onto the nodes of t with the
// same path of function names (call sites merged): the two files number
// their nodes independently. Contexts t lacks are left out.
func mapOnto(t, base *cct.Tree, w []float64) []float64 {
	index := map[string]cct.NodeID{}
	key := func(tr *cct.Tree, id cct.NodeID) string {
		var parts []string
		for _, f := range tr.Path(id) {
			parts = append(parts, tr.Func(f).Name)
		}
		return strings.Join(parts, "\x00")
	}
	for i := 0; i < t.Len(); i++ {
		k := key(t, cct.NodeID(i))
		if _, ok := index[k]; !ok {
			index[k] = cct.NodeID(i)
		}
	}
	out := make([]float64, t.Len())
	for i := 0; i < base.Len() && i < len(w); i++ {
		if w[i] == 0 {
			continue
		}
		if id, ok := index[key(base, cct.NodeID(i))]; ok {
			out[id] += w[i]
		}
	}
	return out
}
