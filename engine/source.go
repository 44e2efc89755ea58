package engine

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	tea "charm.land/bubbletea/v2"
	"github.com/cctop/cctop/cct"
	"github.com/cctop/cctop/correct"
	"github.com/cctop/cctop/tui"
)

// readTree reads a pprof file into a tree, with a one-line error.
func readTree(path string) (*cct.Tree, cct.Meta, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, cct.Meta{}, fmt.Errorf("cannot read %s: %v", path, unwrapPath(err))
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		return nil, cct.Meta{}, fmt.Errorf("cannot read %s: is a directory", path)
	}
	t, m, err := cct.ReadProfile(f)
	if err != nil {
		return nil, cct.Meta{}, fmt.Errorf("%s: %v", path, err)
	}
	return t, m, nil
}

func unwrapPath(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// fileSource shows a saved profile: its time, or its call estimates under
// the density and latency toggles, against a base profile.
type fileSource struct {
	name       string
	tree, base *cct.Tree
	meta       cct.Meta
	msgs       chan tea.Msg

	mu      sync.Mutex
	metric  string
	density bool
	latency bool
	compare bool
	seq     uint64
	snap    tui.Snapshot
}

func newFileSource(path, basePath string) (*fileSource, error) {
	t, m, err := readTree(path)
	if err != nil {
		return nil, err
	}
	s := &fileSource{name: filepath.Base(path), tree: t, meta: m, msgs: make(chan tea.Msg, 8),
		metric: "time", density: true, latency: true}
	if basePath != "" {
		if s.base, _, err = readTree(basePath); err != nil {
			return nil, err
		}
		s.compare = true
		s.name += " vs " + filepath.Base(basePath)
	}
	if m.Calls {
		s.metric = "calls"
	}
	s.rebuild()
	return s, nil
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
	s.mu.Lock()
	switch a.Kind {
	case tui.ToggleDensity:
		s.density = !s.density
	case tui.ToggleLatency:
		s.latency = !s.latency
	case tui.SetMetric:
		s.metric = "time"
		if a.Value != 0 {
			s.metric = "calls"
		}
	case tui.CycleComparison:
		s.compare = !s.compare && s.base != nil
	case tui.Export:
		s.mu.Unlock()
		path := a.Path
		if path == "" {
			path = "cctop.pb.gz"
		}
		if err := writeProfile(path, "pprof", s.tree, s.meta); err != nil {
			s.send(tui.ErrorMsg{Err: err})
		} else {
			s.send(tui.StatusMsg{Text: "exported to " + path})
		}
		return
	default:
		s.mu.Unlock()
		s.send(tui.StatusMsg{Text: a.Kind.String() + " needs a live target"})
		return
	}
	s.mu.Unlock()
	s.rebuild()
	s.send(tui.SnapshotReadyMsg{})
}

func (s *fileSource) send(m tea.Msg) {
	select {
	case s.msgs <- m:
	default:
	}
}

// weights is the shown metric of t per node.
func (s *fileSource) weights(t *cct.Tree, calls bool) []float64 {
	w := make([]float64, t.Len())
	for i := range w {
		m := t.Node(cct.NodeID(i)).Self
		switch {
		case !calls:
			w[i] = float64(m.Time)
		case s.density && s.latency:
			w[i] = float64(m.CallsAdj)
		case s.density:
			w[i] = float64(m.Calls)
		default:
			w[i] = float64(m.Samples)
		}
	}
	return w
}

func (s *fileSource) rebuild() {
	s.mu.Lock()
	defer s.mu.Unlock()
	calls := s.metric == "calls" && s.meta.Calls
	self := s.weights(s.tree, calls)
	var cmp []float64
	overlap := -1.0
	comparison := ""
	if s.compare && s.base != nil {
		cmp = mapOnto(s.tree, s.base, s.weights(s.base, calls))
		overlap = correct.OverlapSlices(self, cmp)
		comparison = "base file"
	}
	threads := make([]cct.Thread, 0, len(s.meta.Threads))
	for _, th := range s.meta.Threads {
		threads = append(threads, th)
	}
	s.seq++
	metric := "time"
	if calls {
		metric = "calls"
	}
	s.snap = tui.Snapshot{
		Tree: s.tree, Self: self, Compare: cmp, Metric: metric, Threads: threads, Seq: s.seq,
		Header: tui.Header{
			Target: s.name, Threads: len(threads), Samples: uint64(s.tree.Total().Samples), Unwound: unwoundComment(s.meta.Comments),
			Counter: commentValue(s.meta.Comments, "counters="), CounterBrief: briefComment(s.meta.Comments),
			ProbeCost: probeCostOf(s.tree), Trigger: commentValue(s.meta.Comments, "trigger="),
			Density: s.density, Latency: s.latency, Comparison: comparison, Overlap: overlap, State: "file",
		},
	}
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
