package engine

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	tea "charm.land/bubbletea/v2"
	"github.com/cctop/cctop/cct"
	"github.com/cctop/cctop/correct"
	"github.com/cctop/cctop/otlp"
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
	br := bufio.NewReader(f)
	if head, _ := br.Peek(8); !maybeOTLP(head) {
		// Read as it streams: a device that never ends (/dev/zero) is
		// no profile, and is not read to its end to find out.
		return readPprof(path, br)
	}
	data, err := io.ReadAll(io.LimitReader(br, maxProfileFile+1))
	if err != nil {
		return nil, cct.Meta{}, fmt.Errorf("cannot read %s: %v", path, unwrapPath(err))
	}
	if len(data) > maxProfileFile {
		return nil, cct.Meta{}, fmt.Errorf("%s: over %d GiB, too large for a profile", path, maxProfileFile>>30)
	}
	if otlp.Sniff(data) {
		// OTLP profiles, as a collector's file exporter writes them:
		// every window and process in the file, merged.
		ps, err := otlp.Read(data)
		if err != nil {
			return nil, cct.Meta{}, fmt.Errorf("%s: %v", path, err)
		}
		procs, err := otlp.Trees(ps)
		if err != nil {
			return nil, cct.Meta{}, fmt.Errorf("%s: %v", path, err)
		}
		if len(procs) == 0 {
			return nil, cct.Meta{}, fmt.Errorf("%s: no profiles in this OTLP file", path)
		}
		t, m := otlp.Merge(procs)
		return t, m, nil
	}
	return readPprof(path, bytes.NewReader(data))
}

// maxProfileFile bounds what view reads of a file that may hold OTLP
// profiles, which are read whole.
const maxProfileFile = 4 << 30

// maybeOTLP says whether a file's first bytes may start OTLP profiles as
// otlp.Read takes them: gzip, a JSON line, a protobuf message (field 1,
// length-delimited) or one behind a 4-byte length. A pprof profile may
// start so too; otlp.Sniff tells them apart.
func maybeOTLP(head []byte) bool {
	switch {
	case len(head) >= 2 && head[0] == 0x1f && head[1] == 0x8b:
		return true
	case len(head) >= 1 && (head[0] == '{' || head[0] == 0x0a):
		return true
	case len(head) >= 5 && head[4] == 0x0a:
		return true
	}
	trimmed := bytes.TrimLeft(head, " \t\r\n")
	return len(trimmed) > 0 && trimmed[0] == '{'
}

// readPprof reads a pprof profile, with a one-line error.
func readPprof(path string, r io.Reader) (*cct.Tree, cct.Meta, error) {
	t, m, err := cct.ReadProfile(r)
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

// fileSource shows a saved profile: its time, or its call estimates as the
// density and latency toggles pick them, against a base profile.
type fileSource struct {
	name       string
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
	t, m, err := readTree(path)
	if err != nil {
		return nil, err
	}
	// The trees are read by the TUI's goroutine and under the source's
	// lock at once: their totals are settled now, so that no read writes.
	t.Settle()
	s := &fileSource{name: filepath.Base(path), tree: t, meta: m, msgs: make(chan tea.Msg, 8)}
	// The file's estimates are at the alpha it was recorded with.
	var alpha float64
	fmt.Sscanf(commentValue(m.Comments, "alpha="), "%g", &alpha)
	params, comparison := correct.Params{Density: true, Latency: true, Alpha: alpha}, ""
	if basePath != "" {
		var bm cct.Meta
		if s.base, bm, err = readTree(basePath); err != nil {
			return nil, err
		}
		s.base.Settle()
		s.baseCalls = bm.Calls
		comparison = "base file"
		s.name += " vs " + filepath.Base(basePath)
	}
	mode := ModeCPU
	switch m.DefaultType {
	case cct.OffCPUType:
		mode = ModeOffCPU
	case cct.WallType:
		mode = ModeWall
	}
	s.view = newViewState(params, comparison, mode)
	if m.Calls {
		s.view.suggestMetric("calls")
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
	s.acting.Lock()
	defer s.acting.Unlock()
	switch {
	case a.Kind == tui.Export:
		s.view.export(a.Path, s)
	case s.view.act(a, s):
		s.rebuild()
		s.send(tui.SnapshotReadyMsg{})
	default:
		s.send(tui.StatusMsg{Text: a.Kind.String() + " needs a live target"})
	}
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
	return selfOf(t, func(m cct.Metrics) int64 {
		switch {
		case p.Density && p.Latency:
			return m.CallsAdj
		case p.Density:
			return m.Calls
		}
		return m.Samples
	})
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
			Target: s.name, Threads: len(threads), Samples: uint64(s.tree.Total().Samples), Unwound: unwoundComment(s.meta.Comments),
			Counter: commentValue(s.meta.Comments, "counters="), CounterBrief: briefComment(s.meta.Comments),
			ProbeCost: probeCostOf(s.tree), Trigger: trigger, TriggerLost: triggerLost(trigger, lost), State: "file",
		},
	}
	s.view.show(&snap, s)
	s.mu.Lock()
	s.snap = snap
	s.mu.Unlock()
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
