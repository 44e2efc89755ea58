package engine

import (
	"cmp"
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cctop/cctop/cct"
	"github.com/cctop/cctop/internal/testutil"
	"github.com/cctop/cctop/tui"
)

// TestRecordBounds records the recursive workload with caps far below what it needs: the
// written tree stays within --max-nodes with the cold contexts in [other], every sample is
// still there, the hot contexts are intact, and the summary and the profile say what was
// folded and how much of the log was dropped.
func TestRecordBounds(t *testing.T) {
	testutil.SkipIfNoPerf(t)
	dir := t.TempDir()
	const maxNodes, maxLog = 100, 300
	_, stderr, code := testutil.Run(t, cctopBin, dir, "record", "-d", "3s", "-o", "b.pb.gz",
		"--max-nodes", strconv.Itoa(maxNodes), "--max-log", strconv.Itoa(maxLog),
		"--calls", "uprobe:github.com/cctop/cctop/workload.recursiveBottom",
		"--", cctopBin, "workload", "recursive", "-loop", "-depth", "10")
	if code != 0 {
		t.Fatalf("record exit %d:\n%s", code, stderr)
	}
	if !strings.Contains(stderr, fmt.Sprintf("tree capped at %d contexts (--max-nodes)", maxNodes)) ||
		!strings.Contains(stderr, fmt.Sprintf("sample log capped at %d (--max-log): call estimates cover the newest %d of", maxLog, maxLog)) {
		t.Fatalf("summary does not tell about the bounds:\n%s", stderr)
	}
	m := regexp.MustCompile(`cctop: (\d+) samples in`).FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("no sample count in:\n%s", stderr)
	}
	samples, _ := strconv.ParseInt(m[1], 10, 64)

	p := testutil.ReadProfile(t, filepath.Join(dir, "b.pb.gz"))
	if got := testutil.SumValue(t, p, "samples"); got != samples {
		t.Errorf("profile holds %d samples, the summary says %d", got, samples)
	}
	contexts := map[string]bool{}
	var inOther, wideLeaves int64
	col := testutil.ValueIndex(t, p, "samples")
	for _, s := range p.Sample {
		names := testutil.StackNames(s)
		slices.Reverse(names)
		for i := 1; i <= len(names); i++ {
			contexts[strings.Join(names[:i], ";")] = true
		}
		switch {
		case names[len(names)-1] == cct.OtherName:
			inOther += s.Value[col]
		case strings.Contains(names[len(names)-1], "workload.wideLeaf"):
			wideLeaves += s.Value[col]
		}
		if slices.Contains(names[:len(names)-1], cct.OtherName) {
			t.Fatalf("[other] has children: %v", names)
		}
	}
	t.Logf("%d samples, %d contexts, %d in [other], %d in wide leaves", samples, len(contexts), inOther, wideLeaves)
	if len(contexts)+1 > maxNodes {
		t.Errorf("%d contexts (and the root) written, cap %d", len(contexts), maxNodes)
	}
	if inOther == 0 {
		t.Error("no samples in [other]")
	}
	// The leaves of the wide tree are where the workload spends most of its time: they
	// must not be folded away.
	if wideLeaves < samples/5 {
		t.Errorf("only %d of %d samples in wide-tree leaves", wideLeaves, samples)
	}
	comments := strings.Join(p.Comments, "\n")
	for _, want := range []string{fmt.Sprintf("max_nodes=%d folded_contexts=", maxNodes), fmt.Sprintf("max_log=%d calls_window=newest %d of", maxLog, maxLog)} {
		if !strings.Contains(comments, want) {
			t.Errorf("comments lack %q:\n%s", want, comments)
		}
	}
}

// TestLiveFoldKeepsBaseline: in the live profile a fold renumbers the tree under a
// baseline taken before it; the baseline moves with it, whole, onto the folded nodes.
func TestLiveFoldKeepsBaseline(t *testing.T) {
	testutil.SkipIfNoPerf(t)
	l, stop := startLive(t, false, func(o *Options) { o.Calls, o.MaxNodes = "none", 100 })
	defer stop()
	// In the tree: the first samples may wait for the modules they
	// need, which load aside (parking.go).
	waitSnap(t, l, "samples", func(s tui.Snapshot) bool { return s.Tree.Total().Samples > 200 })
	l.Do(tui.Action{Kind: tui.Baseline})
	s := waitSnap(t, l, "the baseline", func(s tui.Snapshot) bool { return s.Header.Comparison == "baseline" })
	var want float64
	before := map[string]float64{}
	for i, v := range s.Compare {
		want += v
		if k := contextKey(s.Tree, cct.NodeID(i)); v > 0 && !strings.HasPrefix(k, cct.OtherName) {
			before[k] = v // [other] may take more in the next fold
		}
	}
	folded := s.Header.Folded
	s = waitSnap(t, l, "a fold", func(s tui.Snapshot) bool { return s.Header.Folded > folded })
	if s.Tree.Len() > 100 || len(s.Self) != s.Tree.Len() {
		t.Fatalf("tree of %d nodes (cap 100), %d self weights", s.Tree.Len(), len(s.Self))
	}
	var got float64
	for _, v := range s.Compare {
		got += v
	}
	if len(s.Compare) > s.Tree.Len() || got != want {
		t.Errorf("baseline after the fold: %d weights summing to %g for %d nodes; before it %g", len(s.Compare), got, s.Tree.Len(), want)
	}
	// The baseline's hot contexts (each 5% of it or more) are kept as themselves: they have
	// the baseline's weight on their new ids. (A light one may have been folded and come
	// back, its weight now in an [other]; among the five heaviest there can be contexts
	// of a single sample.)
	heavy := slices.Collect(maps.Keys(before))
	slices.SortFunc(heavy, func(a, b string) int { return cmp.Compare(before[b], before[a]) })
	heavy = slices.DeleteFunc(heavy, func(k string) bool { return before[k] < want/20 })
	if len(heavy) == 0 {
		t.Fatal("no context holds 5% of the baseline")
	}
	at := map[string]int{}
	for i := 1; i < s.Tree.Len(); i++ {
		at[contextKey(s.Tree, cct.NodeID(i))] = i
	}
	for _, k := range heavy {
		i, ok := at[k]
		if !ok {
			t.Errorf("%s (baseline %g) is gone", k, before[k])
			continue
		}
		if now := s.Compare[i]; now != before[k] {
			t.Errorf("%s: baseline %g before the fold, %g after", k, before[k], now)
		}
	}
}

// contextKey names a node by its path of functions and call sites.
func contextKey(tr *cct.Tree, id cct.NodeID) string {
	var b strings.Builder
	for x := id; x > 0; x = tr.Node(x).Parent {
		n := tr.Node(x)
		fmt.Fprintf(&b, "%s@%x;", tr.Func(n.Func).Name, n.CallSite)
	}
	return b.String()
}
