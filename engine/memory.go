package engine

import (
	"fmt"
	"strconv"

	"github.com/cctop/cctop/tui"
)

// memoryLine says what the profile holds in memory: the tree, the sample
// log and the symbol tables against their budget (--symbol-mib). Shown in
// the live counters panel, the record summary and the profile's comments.
func (b *builder) memoryLine() string {
	s := fmt.Sprintf("tree %s contexts %s", tui.FormatCount(float64(b.tree.Len())), mib(b.tree.Bytes()))
	if d := b.tree.AddrsDropped(); d > 0 {
		// Past the tree's bound of leaf addresses: those samples stand
		// at their context's first address in lines and instructions.
		s += fmt.Sprintf(" (%s samples past the bound of leaf addresses, at their context's first)", tui.FormatCount(float64(d)))
	}
	if w := b.weights; w != nil {
		s += fmt.Sprintf(", sample log %s samples %s", tui.FormatCount(float64(w.log.Len())), mib(w.log.Bytes()))
	}
	st := b.res.MemStats()
	s += fmt.Sprintf(", symbols %s in %d modules", mib(st.Bytes), st.Modules)
	if st.Budget > 0 {
		s += " of " + mib(st.Budget)
	}
	if st.Evictions > 0 {
		s += fmt.Sprintf(" (%d dropped, %d read again)", st.Evictions, st.Reloads)
	}
	if st.DebugRests > 0 {
		// Many reads again would say the rest comes too soon for this
		// profile: each reads and inflates the sections once more.
		s += fmt.Sprintf(" (debug info let go %d times while unused, read again %d)", st.DebugRests, st.DebugWakes)
	}
	if st.Kernel > 0 {
		s += ", kernel symbols " + mib(st.Kernel)
	}
	return s
}

// mib is n bytes in MiB, to a tenth below 10.
func mib(n int64) string {
	m := float64(n) / (1 << 20)
	if m < 10 {
		return strconv.FormatFloat(m, 'f', 1, 64) + " MiB"
	}
	return strconv.FormatFloat(m, 'f', 0, 64) + " MiB"
}
