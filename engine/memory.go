package engine

import (
	"fmt"
	"strconv"
)

// memoryLine says what the profile holds in memory: the tree, the sample
// log and the symbol tables against their budget (--symbol-mib). Shown in
// the live counters panel, the record summary and the profile's comments.
func (b *builder) memoryLine() string {
	s := fmt.Sprintf("tree %s contexts %s", count(int64(b.tree.Len())), mib(b.tree.Bytes()))
	if w := b.weights; w != nil {
		s += fmt.Sprintf(", sample log %s samples %s", count(int64(w.log.Len())), mib(w.log.Bytes()))
	}
	st := b.res.MemStats()
	s += fmt.Sprintf(", symbols %s in %d modules", mib(st.Bytes), st.Modules)
	if st.Budget > 0 {
		s += " of " + mib(st.Budget)
	}
	if st.Evictions > 0 {
		s += fmt.Sprintf(" (%d dropped, %d read again)", st.Evictions, st.Reloads)
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

// count is n with a k or M suffix past ten thousand.
func count(n int64) string {
	switch {
	case n >= 10_000_000:
		return strconv.FormatInt(n/1_000_000, 10) + "M"
	case n >= 10_000:
		return strconv.FormatInt(n/1000, 10) + "k"
	}
	return strconv.FormatInt(n, 10)
}
