package engine

import (
	"strings"
	"testing"

	"github.com/cctop/cctop/cct"
	"github.com/cctop/cctop/symbol"
)

// The memory line says when samples went past the tree's bound of leaf
// addresses, and not otherwise.
func TestMemoryLineAddrsDropped(t *testing.T) {
	b := newBuilder(symbol.NewResolver())
	work := b.tree.Intern(cct.Func{Name: "work", Module: "/bin/app"})
	st := []cct.Frame{{Func: work}}
	b.tree.Add(st, 1, cct.Metrics{Samples: 1})
	if line := b.memoryLine(); strings.Contains(line, "leaf addresses") {
		t.Errorf("nothing dropped, yet: %q", line)
	}
	for pc := range uint64(1<<18 + 3) {
		st[0].Addr = pc + 1
		b.tree.Add(st, 1, cct.Metrics{Samples: 1})
	}
	if line := b.memoryLine(); !strings.Contains(line, "(4 samples past the bound of leaf addresses") {
		t.Errorf("memory line %q; want the 4 samples past the bound", line)
	}
}
